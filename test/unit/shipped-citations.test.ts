/**
 * What ships (package.json "files": src, docs, README.md, CHANGELOG.md) cites nothing that does not:
 * a comment or page states its rule itself instead of pointing at the specification this package was
 * written from, or at the repository's tests, scripts and benchmarks, which no user has.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")

const filesUnder = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full) : /\.(ts|md)$/.test(entry.name) ? [full] : []
  })

const shipped = (): ReadonlyArray<string> => [
  ...filesUnder(path.join(root, "src")),
  ...(fs.existsSync(path.join(root, "docs")) ? filesUnder(path.join(root, "docs")) : []),
  path.join(root, "README.md"),
  path.join(root, "CHANGELOG.md")
].filter((file) => fs.existsSync(file))

describe("shipped files", () => {
  it("cite no unshipped specification (CONTRACT, §n, shared/spec, NOTES.md)", () => {
    const citations = shipped().flatMap((file) =>
      fs.readFileSync(file, "utf8").split("\n").flatMap((line, index) =>
        /CONTRACT|§|shared\/spec|NOTES\.md/.test(line) ? [`${path.relative(root, file)}:${index + 1}: ${line.trim()}`] : []
      )
    )
    expect(citations).toEqual([])
  })

  it("cite no file of the repository that the package leaves out (its tests, scripts, bench, CI)", () => {
    const citations = shipped().flatMap((file) =>
      fs.readFileSync(file, "utf8").split("\n").flatMap((line, index) =>
        /(^|[^\w.\/-])(test|scripts|bench|\.ci)\/[\w.-]/.test(line) ? [`${path.relative(root, file)}:${index + 1}: ${line.trim()}`] : []
      )
    )
    expect(citations).toEqual([])
  })
})
