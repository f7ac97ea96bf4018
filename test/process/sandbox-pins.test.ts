/**
 * The sandbox's pinning step on the host, run for real with `/bin/sh`: it opens each pinned directory
 * on its descriptor (bubblewrap then binds each with `--bind-fd`), refuses one whose path led
 * elsewhere, and runs what follows it where it was started.
 */
import { describe, expect, it } from "@effect/vitest"
import { afterAll, beforeEach } from "vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { pinOpener } from "../../src/layers/internal/sandbox/bwrap.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-pins")
afterAll(dirs.removeAll)

// What bubblewrap would get: the descriptors, the working directory and the environment.
const probe = [
  "/bin/sh",
  "-c",
  `for fd in 5 6; do readlink /proc/$$/fd/$fd || echo "fd $fd closed"; done; pwd -P; echo "PWD=$PWD"; echo "OLDPWD=\${OLDPWD-unset}"`
]

// `/bin/sh` is dash here, bash on other distributions: the step runs under each.
const shells = ["/bin/sh", "/bin/bash"] as const
let shell: (typeof shells)[number] = "/bin/sh"

const runPins = (pinned: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  spawnSync(shell, [...pinOpener(pinned).slice(1), ...probe], {
    // As `sh`, bash runs as it does where it is `/bin/sh` (POSIX mode, no start-up files).
    argv0: "sh",
    cwd,
    env: { PATH: "/usr/bin:/bin", ...env },
    encoding: "utf8",
    // Bounds a run that waits on a pipe; a refusal takes milliseconds.
    timeout: 10_000
  })

it("the sandbox's pinned directories are opened by /bin/sh", () => {
  expect(pinOpener(["/pinned"])[0]).toBe("/bin/sh")
})

describe.each(shells)("the sandbox's pinned directories, under %s", (each) => {
  beforeEach(() => {
    shell = each
  })

  it("are opened on descriptors 5 and on, and what follows starts in the directory and environment it was started with", () => {
    const root = dirs.fresh("open")
    const pins = [path.join(root, ".config"), path.join(root, ".config", "gh")]
    const work = path.join(root, "work")
    for (const dir of [...pins, work]) fs.mkdirSync(dir, { recursive: true })
    const result = runPins(pins, work, { PWD: work })
    expect(result.stderr).toBe("")
    expect(result.stdout).toBe(`${pins[0]}\n${pins[1]}\n${work}\n${"PWD=" + work}\nOLDPWD=unset\n`)
  })

  it("keeps an OLDPWD the caller gave", () => {
    const root = dirs.fresh("oldpwd")
    fs.mkdirSync(path.join(root, "pin"))
    // A directory: bash drops an OLDPWD that names none as it starts.
    const oldpwd = dirs.fresh("somewhere")
    const result = runPins([path.join(root, "pin")], root, { PWD: root, OLDPWD: oldpwd })
    expect(result.stdout.split("\n").slice(-2)).toEqual([`OLDPWD=${oldpwd}`, ""])
  })

  it("refuses a named pipe where a directory was, at once, instead of waiting for a writer", () => {
    const root = dirs.fresh("fifo")
    const pin = path.join(root, ".docker")
    spawnSync("mkfifo", [pin])
    const result = runPins([pin], root)
    expect(result.signal).toBeNull()
    expect(result.status).toBe(1)
    expect(result.stderr).toBe(`bwrap: ${pin} was moved while the sandbox started\n`)
    expect(result.stdout).toBe("")
  })

  it("refuses a link and a missing directory, each with its line", () => {
    const root = dirs.fresh("refused")
    const link = path.join(root, "linked")
    fs.symlinkSync(dirs.fresh("elsewhere"), link)
    for (const pin of [link, path.join(root, "missing")]) {
      const result = runPins([pin], root)
      expect(result.status, pin).toBe(1)
      expect(result.stderr).toBe(`bwrap: ${pin} was moved while the sandbox started\n`)
    }
  })
})
