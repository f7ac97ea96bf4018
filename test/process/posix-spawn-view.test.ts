/**
 * A command `posix_spawn` starts sees the same shell as one `child_process` spawns for the same
 * request: `$0`, a seeded `RANDOM`, bash's dynamic variables, its place as the leader of its own
 * session and group and as the host's child, cwd, exported env, open descriptors, umask, signal
 * dispositions (none ignored, caught or blocked), options and limits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { listFds } from "../support/processes.js"
import { spawnPath } from "../support/spawnPath.js"

const run = (request: BashExecutor.Request) =>
  Effect.gen(function*() {
    const bash = yield* BashExecutor
    return yield* bash.run(yield* bash.resolve(request))
  })

/** What the command sees of its shell; the first line is `$$ $PPID`, the rest holds no pid. */
const view = [
  "echo $$ $PPID",
  "echo \"0=$0 #=$# -=$- SHLVL=$SHLVL BASH=$BASH\"",
  "RANDOM=42; echo \"random $RANDOM\"; RANDOM=42; echo \"random $RANDOM\"",
  "declare -p RANDOM SRANDOM LINENO BASHPID HISTCMD BASH_SUBSHELL BASH_COMMAND COMP_WORDBREAKS OLDPWD 2>&1 | sed 's/=.*//'",
  "read -r _ _ _ ppid pgrp session _ < /proc/$$/stat",
  "echo \"leader $(( $$ == pgrp && $$ == session )) ppid $(( PPID == ppid )) ppid-outside $(( PPID != pgrp ))\"",
  "pwd; pwd -P; umask; umask -S",
  "export -p",
  "env -u _ | sort",
  listFds,
  "trap -p",
  "grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status",
  "shopt -p; set -o; ulimit -a",
  "echo err >&2; exit 3"
].join("\n")

/** The view past its pid line, with pipe and socket inode numbers (`pipe:[123]`) left out. */
const withoutPids = (text: string) => text.slice(text.indexOf("\n") + 1).replace(/:\[\d+\]/g, "")
const pids = (text: string) => text.split("\n")[0]!.split(" ").map(Number) as [number, number]

const longScript = `: ${"x".repeat(70_000)}\n${view}`

/** Requests with stdin, a script too long for argv, and envs that hold bash's own variables. */
const requests: ReadonlyArray<{ readonly name: string; readonly request: BashExecutor.Request }> = [
  { name: "plain", request: { command: view, env: { EXPORTED_X: "1" } } },
  { name: "with stdin", request: { command: view, stdin: "input" } },
  { name: "a script too long for argv", request: { command: longScript } },
  { name: "BASH_ARGV0", request: { command: view, env: { BASH_ARGV0: "x" } } },
  {
    name: "bash's dynamic variables",
    request: {
      command: view,
      env: Object.fromEntries(
        ["RANDOM", "SRANDOM", "LINENO", "BASHPID", "HISTCMD", "BASH_SUBSHELL", "BASH_COMMAND", "COMP_WORDBREAKS"]
          .map((name) => [name, "42"])
      )
    }
  },
  { name: "OLDPWD not a directory", request: { command: view, env: { OLDPWD: "/nonexistent" } } },
  { name: "OLDPWD a directory", request: { command: view, env: { OLDPWD: "/" } } }
]

describe("a command spawned by posix_spawn", () => {
  it.live("sees the shell a command spawned by child_process sees, for the same request", () =>
    Effect.gen(function*() {
      const posix = yield* Layer.build(LocalBashExecutor.layer({ graceMs: 300 }))
      const direct = yield* Layer.build(LocalBashExecutor.layer({ graceMs: 300, directSpawn: true }))
      expect(yield* spawnPath.pipe(Effect.provide(posix))).toBe("posix_spawn")
      expect(yield* spawnPath.pipe(Effect.provide(direct))).toBe("child_process")
      for (const { name, request } of requests) {
        const viaChildProcess = yield* run(request).pipe(Effect.provide(direct))
        const viaPosix = yield* run(request).pipe(Effect.provide(posix))
        // Both are the host's own children.
        expect(pids(viaChildProcess.stdout.text)[1], name).toBe(process.pid)
        expect(pids(viaPosix.stdout.text)[1], name).toBe(process.pid)
        const seen = withoutPids(viaPosix.stdout.text)
        expect(seen, name).toBe(withoutPids(viaChildProcess.stdout.text))
        expect([viaPosix.stderr.text, viaPosix.exitCode], name).toEqual([viaChildProcess.stderr.text, viaChildProcess.exitCode])
        const seeded = seen.match(/^random \d+$/gm)
        expect(seeded?.length, name).toBe(2)
        expect(seeded?.[0], name).toBe(seeded?.[1])
        expect(seen, name).toContain("leader 1 ppid 1 ppid-outside 1\n")
        // No signal blocked or ignored (grep, which reads the status, catches its own SIGSEGV).
        expect(seen, name).toMatch(/^SigBlk:\t0+\nSigIgn:\t0+\n/m)
      }
    }).pipe(Effect.scoped))
})
