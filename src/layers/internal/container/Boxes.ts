/**
 * The boxes of one executor layer: one container per session (and one for calls without a session),
 * created on first use, replaced when it was removed from outside, stopped after an idle time when
 * configured, and removed with the layer. Each carries labels naming the session and its host (the
 * machine's boot, the host's pid namespace, pid and start time), so a later host sweeps the boxes of
 * hosts that died without removing theirs, by what the engine tells of them and no file of the host.
 *
 * @internal
 */
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { ownedPrefix, ownerPrefixIsDead } from "../executor/spillOwner.js"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { ContainerEngineError } from "../../../services/ContainerEngine.js"
import { supervisorDir, supervisorSetupArgv, supervisorUid } from "./wrapper.js"

/** The labels every box carries; the host's identity is `boot` plus `host`. */
export const labels = {
  marker: "effect-bash",
  session: "effect-bash.session",
  hostname: "effect-bash.hostname",
  /** The machine's boot: pids and start times are this boot's. */
  boot: "effect-bash.boot",
  /** The host's {@link ownedPrefix}: its pid namespace, pid and start time. */
  host: "effect-bash.host",
  /** The layer that made the box: a host may run several. */
  layer: "effect-bash.layer"
} as const

/**
 * This boot of the machine (`/proc/sys/kernel/random/boot_id`): two machines, even with one hostname
 * and both in their initial pid namespace, never share it. `undefined` off Linux.
 */
const bootId: string | undefined = (() => {
  try {
    return NodeFs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined
  } catch {
    return undefined
  }
})()

/**
 * The directory a new box would mount is not on this host: the engine is never asked to bind it (it
 * would create it on the host, as the engine's user).
 */
export class WorkspaceMissing extends Data.TaggedError("WorkspaceMissing")<{ readonly path: string }> {}

/**
 * Where a box's files are: `bind`, a host directory mounted at the same path (an engine on this
 * machine); `volume`, an engine volume at `target`, with nothing of the host mounted (any engine):
 * the box's own, removed with it, or the one `name` gives, which every box of the layer mounts and
 * nothing of the layer removes.
 */
export type Workspace =
  | { readonly kind: "bind"; readonly host: string; readonly target: string }
  | { readonly kind: "volume"; readonly target: string; readonly name?: string | undefined }

/**
 * What a network of the layer's adds to each box: mounts of its own for the session's box, and what
 * runs once the box has started (created, or started again), as the supervisor's uid.
 */
export interface BoxAttachment {
  readonly mounts: (session: string) => Effect.Effect<ContainerEngine.BoxOptions["mounts"], ContainerEngine.Error>
  readonly started: (box: string, supervisorUid: number) => Effect.Effect<void, ContainerEngine.Error>
}

/** What every box of the layer is made of, but its mounts, labels and supervisor's directory. */
export interface BoxSettings extends Omit<ContainerEngine.BoxOptions, "mounts" | "volumes" | "labels" | "supervisorDir"> {
  /** The uid the box's user has, when known (the supervisor's copy of bash belongs to another). */
  readonly uid: number | undefined
  /**
   * The workspace every box has: with `bind`, the one host directory every box mounts (`host`,
   * symlinks resolved, at `target`, the path commands use). It is configured, never taken from a
   * call: a call's workdir is the model's to choose, and a path below the mount can be swapped for a
   * link by another box between a check and the bind.
   */
  readonly workspace: Workspace
  /** Stop a box that ran nothing for this long; never when absent. */
  readonly idleStopMs?: number | undefined
  /** An allow-listed network's part in each box. */
  readonly attach?: BoxAttachment | undefined
}

/** One live box. */
export interface Box {
  readonly id: string
  readonly session: string
  /** The owner of the box's supervisor shell. */
  readonly supervisorUid: number
  /** Set once the box was found gone: the next call gets a new one. */
  gone: boolean
}

/** Removes a dead host's box. */
const removeDeadBox = (engine: ContainerEngine.Service, box: ContainerEngine.BoxListing) =>
  engine.removeBox(box.id).pipe(
    Effect.zipRight(Effect.logDebug("removed the container of a dead host", box.id)),
    Effect.catchAll((error) => Effect.logWarning("could not remove the container of a dead host", error.message))
  )

/**
 * Removes the volumes carrying `labels` that no box uses any more (one a box still uses is refused
 * by the engine, and stays). Failures are logged, never raised.
 */
const removeVolumes = (engine: ContainerEngine.Service, selector: Readonly<Record<string, string>>, keep: (volume: ContainerEngine.VolumeListing) => boolean) =>
  engine.listVolumes(selector).pipe(
    Effect.flatMap((volumes) =>
      Effect.forEach(
        volumes.filter((volume) => !keep(volume)),
        (volume) => Effect.catchAll(engine.removeVolume(volume.name), (error) => Effect.logDebug("could not remove a volume", volume.name, error.message)),
        { concurrency: "unbounded", discard: true }
      )
    ),
    Effect.catchAll((error) => Effect.logWarning("could not list the volumes of dead hosts", error.message))
  )

/**
 * The layers of this process that closed leaving boxes behind (their engine did not answer): the
 * next layer's sweep removes those boxes as it does a dead host's.
 */
const leftByClosedLayers = new Set<string>()

/**
 * Removes the boxes of this machine's hosts that are no longer running, found on the engine by their
 * labels (this boot, a host whose pid is gone or now another process's), and those a closed layer of
 * this process left, and then the volumes such hosts and layers made with their boxes (a volume the
 * user named carries no label of ours, and stays). Failures only cost the engine's resources and some
 * disk, so they are logged, never raised.
 */
export const sweepDeadHosts = (engine: ContainerEngine.Service): Effect.Effect<void> => {
  if (bootId === undefined) return Effect.void
  const ours = { [labels.marker]: "1", [labels.boot]: bootId }
  const alive = (listed: { readonly labels: Readonly<Record<string, string>> }) =>
    !ownerPrefixIsDead(listed.labels[labels.host] ?? "") && !leftByClosedLayers.has(listed.labels[labels.layer] ?? "")
  return engine.listBoxes(ours).pipe(
    Effect.flatMap((boxes) =>
      Effect.forEach(boxes.filter((box) => !alive(box)), (box) => removeDeadBox(engine, box), { concurrency: "unbounded", discard: true })
    ),
    Effect.catchAll((error) => Effect.logWarning("could not list the containers of dead hosts", error.message)),
    Effect.zipRight(removeVolumes(engine, ours, alive))
  )
}

/**
 * Copies the image's bash to the box's supervisor directory, execute-only, as `uid` (see
 * `supervisorShell`), unless it is there; true when it was made. Fails when the image lacks `cp` or
 * `chmod`.
 */
const makeSupervisorShell = (engine: ContainerEngine.Service, box: string, uid: number): Effect.Effect<boolean, ContainerEngine.Error> =>
  engine.run(box, supervisorSetupArgv, `${uid}:${uid}`).pipe(
    Effect.filterOrFail(
      (output) => output === "ready" || output === "made",
      () => new ContainerEngineError({ message: "the container's supervisor shell could not be made: the image needs bash, cp and chmod" })
    ),
    Effect.map((output) => output === "made")
  )

export class Boxes {
  private readonly boxes = new Map<string, Box>()
  private readonly busy = new Map<Box, number>()
  private readonly idle = new Map<Box, Fiber.RuntimeFiber<void>>()
  private readonly stopped = new Set<Box>()
  private readonly layer = NodeCrypto.randomUUID()

  private constructor(
    private readonly engine: ContainerEngine.Service,
    private readonly settings: BoxSettings,
    /** The host's {@link ownedPrefix}. */
    private readonly host: string,
    private readonly lock: Effect.Semaphore,
    private readonly scope: Scope.Scope
  ) {}

  /** The layer's boxes, all removed when `Scope` closes. */
  static make(engine: ContainerEngine.Service, settings: BoxSettings): Effect.Effect<Boxes, never, Scope.Scope> {
    return Effect.gen(function*() {
      const boxes = new Boxes(engine, settings, ownedPrefix(), yield* Effect.makeSemaphore(1), yield* Effect.scope)
      yield* Effect.addFinalizer(() => boxes.removeAll)
      return boxes
    })
  }

  /** The session's box, created (or started again) when needed. */
  acquire(session: string): Effect.Effect<Box, ContainerEngine.Error | WorkspaceMissing> {
    const existing = this.boxes.get(session)
    if (existing !== undefined && !existing.gone && !this.stopped.has(existing)) return this.use(existing)
    return this.lock.withPermits(1)(Effect.suspend(() => {
      const box = this.boxes.get(session)
      if (box !== undefined && !box.gone) {
        if (!this.stopped.has(box)) return this.use(box)
        // One that cannot start again (removed from outside while stopped, its mount gone) is replaced.
        return this.engine.startBox(box.id).pipe(
          Effect.zipRight(makeSupervisorShell(this.engine, box.id, box.supervisorUid)),
          Effect.zipRight(this.attached(box.id, box.supervisorUid)),
          Effect.tap(() => Effect.sync(() => this.stopped.delete(box))),
          Effect.zipRight(this.use(box)),
          Effect.catchAll(() => this.replace(box, session))
        )
      }
      return this.replace(box, session)
    }))
  }

  private replace(box: Box | undefined, session: string): Effect.Effect<Box, ContainerEngine.Error | WorkspaceMissing> {
    return (box === undefined ? Effect.void : this.discard(box)).pipe(
      Effect.zipRight(this.create(session)),
      Effect.flatMap((created) => this.use(created))
    )
  }

  /**
   * Removes `box` at once, unusable (nothing can start in it any more): the session's next call gets
   * a new one.
   */
  removeNow(box: Box): Effect.Effect<void, ContainerEngine.Error> {
    return Effect.suspend(() => {
      box.gone = true
      return this.engine.removeBox(box.id)
    })
  }

  /**
   * Makes the box's supervisor shell again if it is missing (the box was restarted from outside);
   * true when it was missing.
   */
  repairSupervisor(box: Box): Effect.Effect<boolean, ContainerEngine.Error> {
    return makeSupervisorShell(this.engine, box.id, box.supervisorUid).pipe(
      Effect.tap((made) => made ? this.attached(box.id, box.supervisorUid) : Effect.void)
    )
  }

  /** Starts the attachment's part in a box that has just started. */
  private attached(box: string, supervisor: number): Effect.Effect<void, ContainerEngine.Error> {
    return this.settings.attach === undefined ? Effect.void : this.settings.attach.started(box, supervisor)
  }

  /** The attachment's mounts for a new box of `session`. */
  private attachedMounts(session: string): Effect.Effect<ContainerEngine.BoxOptions["mounts"], ContainerEngine.Error> {
    return this.settings.attach === undefined ? Effect.succeed([]) : this.settings.attach.mounts(session)
  }

  /**
   * The volume's root belongs to the box's root: without a capability, it can still open it to every
   * user of the box.
   */
  private openToBoxUsers(box: string, target: string): Effect.Effect<void, ContainerEngine.Error> {
    return Effect.asVoid(this.engine.run(box, ["chmod", "0777", "--", target], "0:0"))
  }

  /** A call on `box` has settled. */
  release(box: Box): Effect.Effect<void> {
    return Effect.suspend(() => {
      // A box discarded meanwhile keeps no count.
      if (!this.busy.has(box)) return Effect.void
      const count = this.busy.get(box)! - 1
      this.busy.set(box, count)
      if (count > 0 || this.settings.idleStopMs === undefined || box.gone) return Effect.void
      // Interruptible: `release` runs in a finalizer, and the fork would inherit its masked region.
      const stop = Effect.interruptible(Effect.sleep(Duration.millis(this.settings.idleStopMs))).pipe(
        Effect.zipRight(this.lock.withPermits(1)(Effect.suspend(() => {
          if ((this.busy.get(box) ?? 0) > 0 || box.gone) return Effect.void
          this.stopped.add(box)
          return this.engine.stopBox(box.id).pipe(Effect.catchAll(() => Effect.sync(() => {
            box.gone = true
          })))
        }))),
        Effect.ensuring(Effect.sync(() => this.idle.delete(box)))
      )
      return Effect.flatMap(Effect.forkIn(stop, this.scope), (fiber) => Effect.sync(() => this.idle.set(box, fiber)))
    })
  }

  private use(box: Box): Effect.Effect<Box> {
    return Effect.suspend(() => {
      this.busy.set(box, (this.busy.get(box) ?? 0) + 1)
      const timer = this.idle.get(box)
      this.idle.delete(box)
      return timer === undefined ? Effect.succeed(box) : Effect.as(Fiber.interrupt(timer), box)
    })
  }

  /** The labels of a box of `session`: whose it is, for the sweeps. */
  private labelsOf(session: string): Record<string, string> {
    return {
      [labels.marker]: "1",
      [labels.session]: session,
      [labels.hostname]: NodeOs.hostname(),
      ...(bootId === undefined ? {} : { [labels.boot]: bootId }),
      [labels.host]: this.host,
      [labels.layer]: this.layer
    }
  }

  private create(session: string): Effect.Effect<Box, ContainerEngine.Error | WorkspaceMissing> {
    return Effect.gen(this, function*() {
      const { attach: _attach, idleStopMs: _idle, uid, workspace, ...options } = this.settings
      if (workspace.kind === "volume") return yield* this.createInVolume(session, workspace.target, workspace.name)
      if (!NodeFs.existsSync(workspace.host)) return yield* new WorkspaceMissing({ path: workspace.target })
      const supervisor = supervisorUid(uid)
      const id = yield* this.attachedMounts(session).pipe(
        Effect.flatMap((attached) =>
          this.engine.createBox({
            ...options,
            supervisorDir: { path: supervisorDir, uid: supervisor },
            labels: this.labelsOf(session),
            mounts: [{ host: workspace.host, target: workspace.target }, ...attached]
          })
        ),
        Effect.tap((id) =>
          makeSupervisorShell(this.engine, id, supervisor).pipe(
            Effect.zipRight(this.attached(id, supervisor)),
            Effect.onError(() => Effect.ignore(this.engine.removeBox(id)))
          )
        )
      )
      const box: Box = { id, session, supervisorUid: supervisor, gone: false }
      this.boxes.set(session, box)
      return box
    })
  }

  /**
   * A box whose files are its own: an engine volume at `target`, writable by the box's user (its
   * root directory is the engine's: the box's root, without a capability, opens it to every user of
   * the box).
   */
  private createInVolume(session: string, target: string, name: string | undefined): Effect.Effect<Box, ContainerEngine.Error> {
    return Effect.gen(this, function*() {
      const { attach: _attach, idleStopMs: _idle, uid, workspace: _workspace, ...options } = this.settings
      const supervisor = supervisorUid(uid)
      const attached = yield* this.attachedMounts(session)
      const id = yield* this.engine.createBox({
        ...options,
        supervisorDir: { path: supervisorDir, uid: supervisor },
        labels: this.labelsOf(session),
        mounts: attached,
        volumes: [{ target, name }]
      })
      const box = yield* Effect.gen(this, function*() {
        yield* makeSupervisorShell(this.engine, id, supervisor)
        yield* this.attached(id, supervisor)
        yield* this.openToBoxUsers(id, target)
        return { id, session, supervisorUid: supervisor, gone: false } satisfies Box
      }).pipe(Effect.onError(() => Effect.ignore(this.engine.removeBox(id))))
      this.boxes.set(session, box)
      return box
    })
  }

  /** Removes `box` from the layer and the engine; true when the engine removed it. */
  private discard(box: Box): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      if (this.boxes.get(box.session) === box) this.boxes.delete(box.session)
      this.busy.delete(box)
      this.stopped.delete(box)
      const timer = this.idle.get(box)
      this.idle.delete(box)
      return Effect.all([
        timer === undefined ? Effect.void : Fiber.interrupt(timer),
        this.engine.removeBox(box.id).pipe(
          Effect.as(true),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning(`could not remove container ${box.id.slice(0, 12)}; the next container layer on this engine removes it`, error.message),
              false
            )
          )
        )
      ]).pipe(Effect.map(([, removed]) => removed))
    })
  }

  /**
   * Removes every box of the layer: those it knows, and any the engine made for a create that was
   * interrupted before its id came back (found by the layer's label). What the engine did not remove
   * (it did not answer) is left to the next layer's sweep, without more requests to wait for.
   */
  private get removeAll(): Effect.Effect<void> {
    const known = Effect.suspend(() =>
      Effect.forEach([...this.boxes.values()], (box) => this.discard(box), { concurrency: "unbounded" })
    )
    const leave = Effect.sync(() => void leftByClosedLayers.add(this.layer))
    const strays = this.engine.listBoxes({ [labels.layer]: this.layer }).pipe(
      Effect.flatMap((found) =>
        Effect.forEach(found, (box) => Effect.ignore(this.engine.removeBox(box.id)), { concurrency: "unbounded", discard: true })
      ),
      // The volumes made with its boxes go with them; one left by a box removed from outside goes now.
      Effect.zipRight(removeVolumes(this.engine, { [labels.layer]: this.layer }, () => false)),
      Effect.catchAll((error) =>
        Effect.zipRight(
          leave,
          Effect.logWarning("could not list this layer's containers; the next container layer on this engine removes them", error.message)
        )
      )
    )
    // Under the lock: a create in flight (bounded) finishes first, so its box is among the known.
    return this.lock.withPermits(1)(known).pipe(Effect.flatMap((removed) => removed.every(Boolean) ? strays : leave))
  }

  /** The box of `session`, when one exists. */
  boxOf(session: string): Option.Option<Box> {
    return Option.fromNullable(this.boxes.get(session))
  }
}
