/**
 * Spill files: the whole raw stream on disk once it outgrows its in-memory budget.
 *
 * Files are created owner-only with exclusive create and unguessable names, inside one private
 * directory per executor layer; the directory is created on first use and removed with the layer's
 * scope unless `keep` is set. The directory is named after its host and handed to the host-death
 * reaper when there is one; the directories of dead hosts are swept beside the layer, from its
 * start. Their total size is bounded by a {@link SpillBudget}.
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import * as NodeOs from "node:os"
import { HostReaper } from "../spawner/HostReaper.js"
import { SpillBudget, SpillBudgetExceeded } from "./SpillBudget.js"
import { ownedPrefix } from "./spillOwner.js"
import { sweepDeadHosts } from "./spillSweep.js"
import { makeSpillWriter } from "./SpillWriter.js"

/**
 * One open spill file.
 */
export interface SpillFile {
  readonly path: string
  /** Fails with `SpillBudgetExceeded` when files still being written fill the layer's budget. */
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, PlatformError | SpillBudgetExceeded>
  /**
   * {@link write} done at once (budget reserved, bytes queued); returns only what is left to wait
   * for — the failure, an eviction, or the disk catching up — and most writes leave nothing.
   */
  readonly offer: (bytes: Uint8Array) => Effect.Effect<void, PlatformError | SpillBudgetExceeded> | undefined
  /** Flushes and closes; `false` when either failed: the file is then removed, never advertised. */
  readonly finish: Effect.Effect<boolean>
  /** Closes and removes the file (errors ignored). */
  readonly discard: Effect.Effect<void>
  /** The finished file was removed to make room for newer ones: its path must no longer be reported. */
  readonly removed: boolean
}

/**
 * Opens spill files in the layer's private directory; `name` starts the file's name (`stdout`,
 * `stderr`, a terminal's id).
 */
export interface SpillStore {
  readonly open: (name: string) => Effect.Effect<SpillFile, PlatformError>
}

/**
 * Builds a spill store whose directory lives as long as the current scope (unless `keep`).
 */
export const makeSpillStore = (
  options: { readonly keep: boolean; readonly parent?: string; readonly maxTotalBytes: number }
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const created = yield* Ref.make<string | undefined>(undefined)
    const reaper = yield* Effect.serviceOption(HostReaper)
    const parent = options.parent ?? NodeOs.tmpdir()
    const budget = new SpillBudget(options.maxTotalBytes)
    // Uninterruptible: a file whose removal was decided counts against the budget until reported gone.
    const removeFiles = (paths: ReadonlyArray<string>) =>
      Effect.forEach(paths, (file) => fs.remove(file).pipe(Effect.ignore), { discard: true }).pipe(
        Effect.zipRight(Effect.sync(() => budget.gone(paths))),
        Effect.uninterruptible
      )

    // Housekeeping that no call needs to wait for: it runs beside the layer, in its scope.
    yield* Effect.forkScoped(sweepDeadHosts(fs, parent))
    const directoryLock = yield* Effect.makeSemaphore(1)
    // Made on first use. Uninterruptible: a directory made but not yet recorded would outlive the
    // layer. (Not `Effect.cached`: it would keep an interruption, or a transient failure, forever.)
    const ensureDirectory = Ref.get(created).pipe(
      Effect.flatMap((existing) =>
        existing !== undefined
          ? Effect.succeed(existing)
          // mkdtemp creates the directory 0700. A kept directory carries no owner: no sweep touches it.
          : fs.makeTempDirectory({ prefix: options.keep ? "effect-bash-" : ownedPrefix(), directory: parent }).pipe(
            Effect.tap((dir) => Ref.set(created, dir)),
            Effect.tap((dir) => options.keep || Option.isNone(reaper) ? Effect.void : reaper.value.removeOnDeath(dir))
          )
      ),
      directoryLock.withPermits(1),
      Effect.uninterruptible
    )
    if (!options.keep) {
      yield* Effect.addFinalizer(() =>
        Ref.get(created).pipe(
          Effect.flatMap((dir) =>
            dir === undefined ? Effect.void : fs.remove(dir, { recursive: true }).pipe(Effect.ignoreLogged)
          )
        )
      )
    }

    const open = (name: string) =>
      Effect.gen(function*() {
        const dir = yield* ensureDirectory
        const file = path.join(dir, `${name}-${randomUUID()}.log`)
        const scope = yield* Scope.make()
        const handle = yield* fs.open(file, { flag: "wx", mode: 0o600 }).pipe(
          Scope.extend(scope),
          Effect.onError(() => Scope.close(scope, Exit.void))
        )
        const writer = makeSpillWriter(handle)
        const close = Effect.exit(Scope.close(scope, Exit.void))
        const share = budget.open(file)
        const remove = Effect.sync(() => budget.startRemoval(share)).pipe(Effect.zipRight(removeFiles([file])))
        const offer = (bytes: Uint8Array): Effect.Effect<void, PlatformError | SpillBudgetExceeded> | undefined => {
          const reservation = budget.reserve(share, bytes.length)
          switch (reservation._tag) {
            case "Reserved":
              return writer.offer(bytes)
            case "Refused":
              return Effect.fail(new SpillBudgetExceeded({ limit: budget.limit }))
            case "RemoveFirst":
              return removeFiles(reservation.paths).pipe(Effect.zipRight(Effect.suspend(() => offer(bytes) ?? Effect.void)))
          }
        }
        const spill: SpillFile = {
          path: file,
          write: (bytes) => Effect.suspend(() => offer(bytes) ?? Effect.void),
          offer,
          // fsync surfaces delayed write-back errors that a plain close would swallow.
          finish: Effect.all([writer.drain, Effect.exit(handle.sync), close]).pipe(
            Effect.map(([written, synced, closed]) => written && Exit.isSuccess(synced) && Exit.isSuccess(closed)),
            // A partial file is no use to anyone and still takes disk space.
            Effect.tap((complete) => complete ? Effect.sync(() => budget.finish(share)) : remove)
          ),
          discard: writer.drain.pipe(Effect.zipRight(close), Effect.zipRight(remove)),
          get removed() {
            return share.state === "removing" || share.state === "removed"
          }
        }
        return spill
      })

    return { open } satisfies SpillStore
  })
