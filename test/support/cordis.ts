/**
 * Helpers for the Cordis adapter tests: process-group liveness from /proc, temp directories, and a
 * bounded real-time poll (these tests drive real processes under real Cordis hosts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Live (non-zombie) members of process group `pgid`, read from /proc/<pid>/stat. */
export const groupMembers = (pgid: number): Array<number> => {
  const members: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8")
    } catch {
      continue
    }
    // Fields after the parenthesised command name: state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) members.push(Number(entry))
  }
  return members
}

/** A fresh private temp directory, and its cleanup. */
export const tempDir = (prefix: string): { readonly path: string; readonly remove: () => void } => {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/** Polls `check` every 20 ms until it returns a value, failing after `timeoutMs`. */
export const eventually = async <A>(check: () => A | undefined | Promise<A | undefined>, timeoutMs = 5_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs}ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
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
