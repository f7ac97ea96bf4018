/**
 * Every shell program the package ships or runs is a `.sh` file that `shellcheck` (Debian's package,
 * which `.ci/run` installs) finds nothing in: the files under `src/` (published with the package), and
 * the build's own under `scripts/`, and the CI entry point `.ci/run`.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** What shellcheck says of `files`. */
const shellcheck = (args: ReadonlyArray<string>) => {
  const run = spawnSync("shellcheck", [...args], { cwd: root, encoding: "utf8" })
  expect(run.error, "shellcheck is not installed (Debian: apt-get install shellcheck)").toBeUndefined()
  return { findings: `${run.stdout}${run.stderr}`, status: run.status }
}

const shellFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? shellFiles(join(dir, entry.name))
      : entry.name.endsWith(".sh")
      ? [relative(root, join(dir, entry.name))]
      : []
  )

describe("shipped shell programs", () => {
  it("shellcheck finds nothing in any .sh file under src/ or scripts/, nor in .ci/run", () => {
    const files = [...shellFiles(join(root, "src")), ...shellFiles(join(root, "scripts")), ".ci/run"].sort()
    expect(files).toEqual(expect.arrayContaining([
      "scripts/docker-test-image.sh",
      "src/layers/internal/container/wrapper.sh",
      "src/layers/internal/network/bridge.sh",
      "src/layers/internal/sandbox/pinDirs.sh",
      "src/layers/internal/spawner/reaper.sh"
    ]))
    expect(shellcheck(["--external-sources", "--", ...files])).toEqual({ findings: "", status: 0 })
  })
})
