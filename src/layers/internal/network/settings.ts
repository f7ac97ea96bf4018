/**
 * The sandbox settings' network policy: the `network: { allow, … }` form or the flat
 * `networkAllow`/`networkDeny`/`networkHosts` lists (flags and variables), checked once as the layer
 * is built, each bad entry named.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as NodeNet from "node:net"
import { LocalBashExecutorConfigError } from "../../executorSettings.js"
import { runnerPath } from "../sandbox/runnerPath.js"
import type { Entry, Policy } from "./allowList.js"
import { canonicalIp, normalHost, parseEntry } from "./allowList.js"

/**
 * The network fields of the sandboxing executor's settings as they decode (`Settings` in
 * `sandboxSettings.ts`, which checks them here: written out so the two modules do not import each other).
 */
export interface NetworkSettings {
  readonly network: "host" | "none" | {
    readonly allow: ReadonlyArray<string>
    readonly deny?: ReadonlyArray<string> | undefined
    readonly denyReasons?: { readonly [name: string]: string } | undefined
    readonly hosts?: { readonly [name: string]: string } | undefined
  }
  readonly networkAllow: ReadonlyArray<string>
  readonly networkDeny: ReadonlyArray<string>
  readonly networkHosts: ReadonlyArray<string>
  readonly allowUnixSockets: boolean
}

/** Whose settings these are, as errors name them. */
type Owner = "bash-sandbox" | "bash-container"

const failOf = (owner: Owner) => (field: string, message: string) =>
  Either.left(new LocalBashExecutorConfigError({ field, message: `${owner}: ${field} ${message}` }))

const fail = failOf("bash-sandbox")

const entries = (field: string, texts: ReadonlyArray<string>, owner: Owner) => {
  const parsed: Array<Entry> = []
  for (const [index, text] of texts.entries()) {
    const entry = parseEntry(text)
    if (typeof entry === "string") return failOf(owner)(field, `entry ${index} ${JSON.stringify(text)} ${entry}`)
    parsed.push(entry)
  }
  return Either.right(parsed)
}

/** `NAME=ADDRESS` as its two sides; without `=`, the whole text as the name and no address. */
const splitPin = (pair: string): readonly [string, string] => {
  const at = pair.indexOf("=")
  return at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)]
}

/**
 * The settings' policy: `undefined` without an allow-list (`network` "host" or "none"), else the
 * checked lists. Fails naming the field and the first bad entry.
 */
export const policyEither = (
  settings: Pick<NetworkSettings, "network" | "networkAllow" | "networkDeny" | "networkHosts">,
  owner: Owner = "bash-sandbox"
): Either.Either<Policy | undefined, LocalBashExecutorConfigError> => {
  const fail = failOf(owner)
  const lists = typeof settings.network === "object" ? settings.network : undefined
  const flat = settings.networkAllow.length > 0 || settings.networkDeny.length > 0 || settings.networkHosts.length > 0
  if (lists === undefined && !flat) return Either.right(undefined)
  if (lists !== undefined && flat) {
    return fail("networkAllow", `and network: { allow } both give an allow-list; give it once`)
  }
  if (lists === undefined && settings.network === "none") {
    return fail("networkAllow", `needs network "host" (the default) or an allow-list, not "none"`)
  }
  const field = lists === undefined ? "networkAllow" : "network.allow"
  const allowTexts = lists?.allow ?? settings.networkAllow
  if (allowTexts.length === 0) return fail(field, "is empty; use network \"none\" to reach no name")
  const hostsField = lists === undefined ? "networkHosts" : "network.hosts"
  const hostPairs: ReadonlyArray<readonly [string, string]> = lists?.hosts === undefined
    ? settings.networkHosts.map(splitPin)
    : Object.entries(lists.hosts)
  const hosts = new Map<string, string>()
  for (const [name, address] of hostPairs) {
    const entry = parseEntry(name)
    if (typeof entry === "string" || entry.wildcard || entry.ip || entry.port !== undefined) {
      return fail(hostsField, `entry ${JSON.stringify(name)} must be NAME=ADDRESS with a host name`)
    }
    if (NodeNet.isIP(address) === 0) {
      return fail(hostsField, `entry ${JSON.stringify(name)}: ${JSON.stringify(address)} is not an IP address`)
    }
    hosts.set(normalHost(entry.host), canonicalIp(address))
  }
  const denyField = lists === undefined ? "networkDeny" : "network.deny"
  return Either.all([entries(field, allowTexts, owner), entries(denyField, lists?.deny ?? settings.networkDeny, owner)]).pipe(
    Either.flatMap(([allow, deny]) => {
      const reasons = lists?.denyReasons ?? {}
      const stray = Object.keys(reasons).find((key) => !deny.some((entry) => entry.text === key))
      if (stray !== undefined) return fail("network.denyReasons", `names ${JSON.stringify(stray)}, which is not a deny entry`)
      const bad = Object.entries(reasons).find(([, reason]) => reason.trim() === "" || /[\r\n\]]/.test(reason))
      if (bad !== undefined) {
        return fail("network.denyReasons", `reason of ${JSON.stringify(bad[0])} must be one non-empty line without "]"`)
      }
      return Either.right<Policy>({ allow, deny, denyReasons: reasons, hosts })
    })
  )
}

/**
 * The container settings' policy: `network: { allow, … }`, or the flat lists with `network` "none"
 * (the container's default, which the allow-list then replaces), checked as {@link policyEither} does.
 */
export const containerPolicyEither = (
  settings: Pick<NetworkSettings, "networkAllow" | "networkDeny" | "networkHosts"> & {
    readonly network: "none" | "bridge" | Exclude<NetworkSettings["network"], string>
  }
): Either.Either<Policy | undefined, LocalBashExecutorConfigError> => {
  const flat = settings.networkAllow.length > 0 || settings.networkDeny.length > 0 || settings.networkHosts.length > 0
  if (settings.network === "bridge" && flat) {
    return failOf("bash-container")("networkAllow", `needs network "none" (the default) or an allow-list, not "bridge"`)
  }
  // "none" stands aside for the flat lists as the sandbox's "host" does.
  return policyEither({ ...settings, network: typeof settings.network === "object" ? settings.network : "host" }, "bash-container")
}

/** {@link policyEither} as an effect, for the layer's build. */
export const policyOf = (
  settings: Parameters<typeof policyEither>[0] & Pick<NetworkSettings, "allowUnixSockets">
): Effect.Effect<Policy | undefined, LocalBashExecutorConfigError> =>
  Effect.suspend(() =>
    Either.flatMap(
      policyEither(settings),
      (policy) => policy === undefined ? Either.right(policy) : Either.map(bridgeTools(settings), () => policy)
    )
  )

/**
 * The programs the bridge runs inside the sandbox, found on `PATH` as the layer starts: `socat`, and
 * `perl` (which installs the unix-socket filter) unless unix sockets are allowed.
 */
export const bridgeTools = (
  settings: Pick<NetworkSettings, "allowUnixSockets">,
  path: string | undefined = process.env.PATH
): Either.Either<{ readonly socatPath: string; readonly perlPath: string }, LocalBashExecutorConfigError> => {
  const socatPath = runnerPath("socat", path)
  const perlPath = runnerPath("perl", path)
  if (!socatPath.includes("/")) {
    return fail("network", "allow-list needs socat on PATH for its bridge (Debian/Ubuntu: apt-get install socat)")
  }
  if (!settings.allowUnixSockets && !perlPath.includes("/")) {
    return fail("network", "allow-list needs perl on PATH to filter unix sockets (or set allowUnixSockets: true)")
  }
  return Either.right({ socatPath, perlPath })
}
