/**
 * Helpers for the Cordis adapter tests: temp directories and a bounded real-time poll (these tests drive
 * real processes under real Cordis hosts).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pollUntil } from "./poll.js"

/** A fresh private temp directory, and its cleanup. */
export const tempDir = (prefix: string): { readonly path: string; readonly remove: () => void } => {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/** Polls `check` until it returns a value, failing after `timeoutMs`. */
export const eventually = async <A>(check: () => A | undefined | Promise<A | undefined>, timeoutMs = 5_000): Promise<A> => {
  const value = await pollUntil(check, (answer) => answer !== undefined, timeoutMs)
  if (value === undefined) throw new Error(`condition not met within ${timeoutMs}ms`)
  return value
}

/** Reads a pid a command wrote to `file` (the command's shell is its process-group leader). */
export const readPid = (file: string): Promise<number> =>
  eventually(() => {
    try {
      const text = readFileSync(file, "utf8").trim()
      return text === "" ? undefined : Number(text)
    } catch {
      return undefined
    }
  })

/** A command that records its group id in `pidFile`, ignores SIGTERM, and would run for 30 s. */
export const termIgnoringCommand = (pidFile: string): string =>
  `trap '' TERM; echo $$ > ${pidFile}; echo started; exec sleep 30`
