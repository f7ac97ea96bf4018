/**
 * The in-sandbox half of an allow-listed network: the command's network namespace has only
 * loopback; two `socat` relays listen there (HTTP proxy on 3128, SOCKS5 on 1080) and carry each
 * connection to the call's proxies over their unix sockets, which the sandbox can see. The relays
 * start before the command, in its PID namespace, so they die with the call.
 *
 * bubblewrap's own `--seccomp` would also stop the relays' `socket(AF_UNIX, …)`, so the unix-socket
 * filter is installed after they start, by `perl` (Debian's essential `perl-base`): it reads the same
 * filter bytes from the descriptor bubblewrap would have read, installs them with
 * `prctl(PR_SET_SECCOMP)` (allowed unprivileged under bubblewrap's `no_new_privs`) and execs the
 * command.
 *
 * @internal
 */
import { readFileSync } from "node:fs"

/** The loopback ports the relays listen on inside the sandbox (its own network namespace). */
const bridgePorts = { http: 3128, socks: 1080 } as const

/**
 * The variables that send curl, git, npm, pip and most HTTP clients through relays on
 * {@link bridgePorts} (`bridge.sh` sets the same in a sandbox).
 */
export const proxyVariables: Readonly<Record<string, string>> = (() => {
  const http = `http://127.0.0.1:${bridgePorts.http}`
  const socks = `socks5h://127.0.0.1:${bridgePorts.socks}`
  const here = "localhost,127.0.0.1,::1"
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: here,
    no_proxy: here
  }
})()

/** `prctl`'s system call number, by Node's `process.arch`; the filter exists for these two only. */
const prctlNumber: Readonly<Record<string, number>> = { x64: 157, arm64: 167 }

/**
 * Reads the filter from descriptor `$1`, installs it (`PR_SET_SECCOMP` = 22,
 * `SECCOMP_MODE_FILTER` = 2, a `struct sock_fprog` of a u16 length and a pointer) and execs the rest.
 */
const installFilter = (arch: string) =>
  [
    `open(my $f, "<&=", shift) or die "bwrap: the network filter: $!\\n"; binmode $f;`,
    `my $b = do { local $/; <$f> }; close $f;`,
    `my $p = pack("S x6 Q", length($b) / 8, unpack("Q", pack("p", $b)));`,
    `syscall(${prctlNumber[arch] ?? -1}, 22, 2, $p) == 0 or die "bwrap: the network filter: $!\\n";`,
    `exec { $ARGV[0] } @ARGV or die "bwrap: exec $ARGV[0]: $!\\n";`
  ].join(" ")

/** Local address `127.0.0.1:port` listening, as a line of `/proc/net/tcp` spells it. */
const listening = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")} 00000000:0000 0A`

/**
 * How long the bridge waits for its relays, in whole seconds of `/proc/uptime` (so between this and one
 * more); the call's own timeout bounds it too.
 */
const bridgeStartSeconds = 5

/** What the bridge needs. */
export interface Bridge {
  readonly socatPath: string
  readonly httpSocket: string
  readonly socksSocket: string
  /** Set when the unix-socket filter applies: `perl`, and the descriptor the filter is on. */
  readonly filter?: { readonly perlPath: string; readonly fd: number; readonly arch: string }
}

let script: string | undefined
/** `bridge.sh` beside this module, read when a sandbox first bridges (the bundles hold it inline). */
const bridgeScript = (): string => script ??= readFileSync(new URL("./bridge.sh", import.meta.url), "utf8")

/**
 * The argv that starts the relays, waits (bounded) until both listen, sets the proxy variables
 * (`HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY` and their kin) and execs the command that follows it, under
 * the filter when set. A relay that does not come up fails the call as a runner failure (a `bwrap: `
 * line).
 */
export const bridgeArgv = (bridge: Bridge): ReadonlyArray<string> => [
  "/bin/sh",
  "-c",
  bridgeScript(),
  "effect-bash-network",
  bridge.socatPath,
  String(bridgePorts.http),
  bridge.httpSocket,
  listening(bridgePorts.http),
  String(bridgePorts.socks),
  bridge.socksSocket,
  listening(bridgePorts.socks),
  String(bridgeStartSeconds),
  bridge.filter === undefined ? "" : String(bridge.filter.fd),
  bridge.filter?.perlPath ?? "",
  bridge.filter === undefined ? "" : installFilter(bridge.filter.arch)
]
