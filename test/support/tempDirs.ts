/**
 * The directories a test file makes under a parent (by default the system's temp directory, its
 * real path), and their removal, which the file calls after its tests.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const tempDirs = (prefix: string, parent: string = fs.realpathSync(os.tmpdir())) => {
  const made: Array<string> = []
  return {
    /** A new private directory `<prefix>-<label>-XXXXXX`. */
    fresh: (label: string): string => {
      const dir = fs.mkdtempSync(path.join(parent, `${prefix}-${label}-`))
      made.push(dir)
      return dir
    },
    /** Removes every directory made so far. */
    removeAll: (): void => {
      for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
