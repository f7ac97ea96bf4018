/**
 * The stdio lists of the layer's spawns. Inherited descriptors reach no command: each is replaced by
 * /dev/null in the child (`child_process` dups the layer's /dev/null descriptor there, `posix_spawn`
 * opens /dev/null there); a host that inherited none has nothing to mask. The /dev/null
 * descriptor (close-on-exec, as Node opens every file) and the lists are the layer's: made once.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import { inheritedDescriptorsSync, maskInherited } from "./inheritedDescriptors.js"

type Entry = "pipe" | "ignore" | number

/** The layer's stdio lists; Node reads them and never changes them. */
export interface Stdio {
  /** A spawn's list, inherited descriptors masked, with a runner's input pipe at `inputFd`. */
  readonly list: (stdin: boolean, script: boolean, inputFd?: number) => ReadonlyArray<Entry>
}

const lists = <E extends Entry>(extra: ReadonlyArray<E>) =>
  [false, true].map((stdin) =>
    [false, true].map((script): ReadonlyArray<"pipe" | "ignore" | E> => [
      stdin ? "pipe" : "ignore",
      "pipe",
      "pipe",
      ...(script ? ["pipe" as const, ...extra.slice(1)] : extra)
    ])
  )

/**
 * `stdio` with a pipe at `fd` (4 or more), for a runner's input: it replaces a masked descriptor
 * there, which the runner closes after reading.
 */
const withInputPipe = (stdio: ReadonlyArray<Entry>, fd: number): ReadonlyArray<Entry> => {
  if (!Number.isSafeInteger(fd) || fd < 4) throw new Error(`a runner's input needs a descriptor of 4 or more, got ${fd}`)
  const list = [...stdio]
  while (list.length <= fd) list.push("ignore")
  list[fd] = "pipe"
  return list
}

/** The layer's stdio lists, with the /dev/null they mask with (closed with the scope). */
export const makeStdio = Effect.gen(function*() {
  const inherited = inheritedDescriptorsSync()
  const devNull = inherited.length === 0 ? undefined : yield* Effect.acquireRelease(
    Effect.sync(() => NodeFs.openSync("/dev/null", "r")),
    (fd) => Effect.sync(() => NodeFs.closeSync(fd))
  )
  const masked = devNull === undefined ? [] : maskInherited(inherited, devNull)
  const maskedLists = lists(masked)
  const stdio: Stdio = {
    list: (stdin, script, inputFd) => {
      const list = maskedLists[stdin ? 1 : 0]![script ? 1 : 0]!
      return inputFd === undefined ? list : withInputPipe(list, inputFd)
    }
  }
  return stdio
})
