/**
 * A command the launcher starts sees the same shell as one the host spawns itself for the same
 * request: `$0`, a seeded `RANDOM`, bash's dynamic variables, its place as the leader of its own
 * session and group, cwd, exported env, open descriptors, umask, signal dispositions, options and
 * limits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { processOf } from "../support/processes.js"
import { launcherPid } from "../support/launcher.js"
import { listFds } from "../support/processes.js"

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

const read = (file: string) => {
  try {
    return fs.readFileSync(file, "latin1")
  } catch {
    return ""
  }
}

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

describe("a launched command's view", () => {
  it.live("is a direct spawn's view for the same request", () =>
    Effect.gen(function*() {
      const launched = yield* Layer.build(LocalBashExecutor.layer({ graceMs: 300 }))
      const direct = yield* Layer.build(LocalBashExecutor.layer({ graceMs: 300, directSpawn: true }))
      yield* launcherPid.pipe(Effect.provide(launched))
      for (const { name, request } of requests) {
        const viaHost = yield* run(request).pipe(Effect.provide(direct))
        const viaLauncher = yield* run(request).pipe(Effect.provide(launched))
        const [, launcher] = pids(viaLauncher.stdout.text)
        // The host spawns its own commands; the launcher, a child of the host, spawns the others.
        expect(pids(viaHost.stdout.text)[1], name).toBe(process.pid)
        expect(launcher, name).not.toBe(process.pid)
        expect(processOf(launcher)?.ppid, name).toBe(process.pid)
        expect(read(`/proc/${launcher}/cmdline`), name).toMatch(/^effect-bash launcher/)
        const seen = withoutPids(viaLauncher.stdout.text)
        expect(seen, name).toBe(withoutPids(viaHost.stdout.text))
        expect([viaLauncher.stderr.text, viaLauncher.exitCode], name).toEqual([viaHost.stderr.text, viaHost.exitCode])
        const seeded = seen.match(/^random \d+$/gm)
        expect(seeded?.length, name).toBe(2)
        expect(seeded?.[0], name).toBe(seeded?.[1])
        expect(seen, name).toContain("leader 1 ppid 1 ppid-outside 1\n")
      }
    }).pipe(Effect.scoped))
})
