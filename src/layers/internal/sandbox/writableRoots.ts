/**
 * The writable roots one sandbox grants under `workspace-write`, kept so that no call's command can
 * move another call's root. A confined command may replace anything below its own root with a link,
 * and bubblewrap follows links when it binds a root. So a root is refused when it nests with one
 * granted before (one would lie inside the other's writable tree), or when it is reached through a
 * link inside a granted root (a command may have planted it). A granted root's own path then
 * crosses no directory any confined command of this sandbox can write. Grants last as long as the
 * sandbox: a planted link outlives the command that made it.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Effect from "effect/Effect"
import { BashRequestError } from "../../../services/BashExecutor.js"
import { within } from "./canonicalDir.js"

/** The kernel's bound on the links one lookup follows. */
const maxLinks = 40

/** Why `given` resolves to something this sandbox must not grant; the resolved root otherwise. */
type Resolution = { readonly root: string } | { readonly refusal: string }

/**
 * `given` (absolute) with its links resolved as the kernel does, refused at the first link that
 * lies inside a granted root. Below a missing directory the rest stays as given: the runner
 * reports it.
 */
const resolveChecked = (given: string, granted: ReadonlySet<string>): Resolution => {
  const insideGranted = (dir: string) => [...granted].find((root) => within(dir, root))
  let resolved = "/"
  const pending = given.split("/").filter((name) => name !== "" && name !== ".")
  let links = 0
  while (pending.length > 0) {
    const name = pending.shift()!
    if (name === "..") {
      resolved = NodePath.dirname(resolved)
      continue
    }
    const next = NodePath.join(resolved, name)
    let target: string | undefined
    try {
      target = NodeFs.lstatSync(next).isSymbolicLink() ? NodeFs.readlinkSync(next) : undefined
    } catch {
      return { root: NodePath.join(next, ...pending) }
    }
    if (target === undefined) {
      resolved = next
      continue
    }
    const holder = insideGranted(resolved)
    if (holder !== undefined) {
      return {
        refusal: `${JSON.stringify(given)} is reached through the link ${JSON.stringify(next)}, inside ${
          JSON.stringify(holder)
        }, which this sandbox has made writable: a confined command may have made that link`
      }
    }
    if (++links > maxLinks) return { refusal: `${JSON.stringify(given)}: too many levels of symbolic links` }
    if (NodePath.isAbsolute(target)) resolved = "/"
    pending.unshift(...target.split("/").filter((part) => part !== "" && part !== "."))
  }
  return { root: resolved }
}

/**
 * The writable roots of one sandbox. `grant` resolves a call's root, checks it against the roots
 * granted so far and records it; synchronous, so no other call's grant comes between.
 */
export const writableRoots = () => {
  const granted = new Set<string>()
  const grant = (given: string): Effect.Effect<string, BashRequestError> =>
    Effect.suspend(() => {
      const resolution = resolveChecked(given, granted)
      if ("refusal" in resolution) return refuse(resolution.refusal)
      const { root } = resolution
      for (const other of granted) {
        if (other === root) continue
        if (within(root, other)) {
          return refuse(`${JSON.stringify(root)} lies inside ${JSON.stringify(other)}, which this sandbox has made writable to another call: a command there could replace it with a link`)
        }
        if (within(other, root)) {
          return refuse(`${JSON.stringify(root)} holds ${JSON.stringify(other)}, which this sandbox has made writable to another call: a command here could replace it with a link`)
        }
      }
      granted.add(root)
      return Effect.succeed(root)
    })
  return { grant }
}

const refuse = (reason: string) =>
  new BashRequestError({
    field: "workspaceRoot",
    message: `workspace-write: ${reason}. The harness sets session directories: confined sessions need the same directory or sibling ones.`
  })
