/**
 * A box's control directory kept in the box (a private file system of its own), for an engine that
 * shares no file system with the host. A watcher runs in the box as the supervisor's uid, which no
 * process of the command's can signal or trace, and says each status file it finds, as it changes,
 * over its exec's output: a channel only the engine carries. A status counts only with its call's
 * tags (`wrapper.ts`), as it does when the host reads the files itself (`ControlDir`); the watcher
 * removes a call's files once its status says the group is empty, and ends when the host's end of
 * its input closes.
 *
 * A command may plant entries there (a FIFO that holds the watcher, a file it cannot read): it can
 * then lose the statuses of its own box's calls, which end as the wrapper's lost calls do (killed),
 * never as a success; no other box's.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { ContainerEngine } from "../../../services/ContainerEngine.js"
import { randomKey, randomName } from "./ControlDir.js"
import type { StatusChannel, StatusWaiter } from "./statusChannel.js"
import { statusCell } from "./statusChannel.js"
import { parseStatus } from "./wrapper.js"

/** How long a status the wrapper wrote before its exit may take to come through the watcher. */
const settleMs = 2_000

/** More than a status file's first lines, as the watcher says them. */
const lineLimit = 16_384

// $1 = the control directory. Polls every 20 ms (a read of its input that times out; the input's
// end, the host gone, ends it), bash builtins only.
const watcherScript = String.raw`
cd -- "$1" || exit 1
declare -A seen=()
while :; do
  for f in *; do
    [[ $f =~ ^[0-9a-f]{32}$ ]] && [ -f "$f" ] && [ ! -L "$f" ] || continue
    text=
    IFS= read -r -d '' -N 4096 text <"$f"
    [ "${"$"}{seen[$f]+x}" = x ] && [ "$text" = "${"$"}{seen[$f]}" ] && continue
    seen[$f]=$text
    printf 'status %s %s\n' "$f" "${"$"}{text//$'\n'/|}"
    case $text in
      *' empty '*|*$'\n''empty '*) rm -f -- "$f" "$f.pid" "$f.cancel"; unset "seen[$f]" ;;
    esac
  done
  read -r -t 0.02 _
  (( $? > 128 )) || exit 0
done
`

// $1 = the control directory, $2 = the exec's name: the host's cancel, as `ControlDir.cancel` makes it.
const cancelScript = String.raw`
cd -- "$1" || exit 0
( set -C; : >"$2.cancel" ) 2>/dev/null || [ -e "$2.cancel" ] || [ -L "$2.cancel" ] || exit 0
[ -f "$2.pid" ] && [ ! -L "$2.pid" ] || exit 0
IFS= read -r -N 32 p <"$2.pid"
printf '%s' "$p"
`

export class BoxControl implements StatusChannel {
  private readonly texts = new Map<string, string>()
  private readonly waiting = new Map<string, () => void>()
  private ended = false

  private constructor(
    private readonly engine: ContainerEngine.Service,
    private readonly box: string,
    /** Where the directory is in the box. */
    private readonly path: string,
    /** The supervisor's `uid:gid`. */
    private readonly user: string,
    private readonly scope: Scope.CloseableScope
  ) {}

  /** Starts the watcher of `box`'s control directory at `path`, as `uid`, in a scope of `parent`'s. */
  static start(
    engine: ContainerEngine.Service,
    box: string,
    path: string,
    uid: number,
    parent: Scope.Scope
  ): Effect.Effect<BoxControl, ContainerEngine.Error> {
    return Effect.gen(function*() {
      const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
      const control = new BoxControl(engine, box, path, `${uid}:${uid}`, scope)
      const exec = yield* Effect.acquireRelease(
        engine.exec(box, { argv: ["bash", "--norc", "--noprofile", "-c", watcherScript, "effect-bash", path], env: {}, user: control.user, stdin: true }),
        (exec) => exec.close
      ).pipe(Scope.extend(scope), Effect.onError(() => Scope.close(scope, Exit.void)))
      yield* Effect.forkIn(Effect.interruptible(control.read(exec)), scope)
      return control
    })
  }

  private read(exec: ContainerEngine.ExecSession): Effect.Effect<void> {
    return Effect.gen(this, function*() {
      let pending = ""
      for (let frame = yield* exec.next; frame !== undefined; frame = yield* exec.next) {
        if (frame.stream !== "stdout") continue
        pending += Buffer.from(frame.bytes).toString("latin1")
        for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n")) {
          this.said(pending.slice(0, end))
          pending = pending.slice(end + 1)
        }
        if (pending.length > lineLimit) pending = ""
      }
    }).pipe(Effect.ensuring(Effect.sync(() => {
      // The box is gone, or its watcher: no status comes any more.
      this.ended = true
      for (const wake of [...this.waiting.values()]) wake()
    })))
  }

  private said(line: string): void {
    const match = /^status ([0-9a-f]{32}) (.*)$/.exec(line)
    if (match === null || !this.waiting.has(match[1]!)) return
    this.texts.set(match[1]!, match[2]!.replaceAll("|", "\n"))
    this.waiting.get(match[1]!)!()
  }

  expect(): StatusWaiter {
    const name = randomName()
    const key = randomKey()
    const arrived = Effect.runSync(Deferred.make<void>())
    const cell = statusCell(() => {
      const text = this.texts.get(name)
      return text === undefined ? undefined : parseStatus(text, key)
    }, () => Deferred.unsafeDone(arrived, Exit.void))
    const read = cell.read
    this.waiting.set(name, () => {
      read()
      if (this.ended) Deferred.unsafeDone(arrived, Exit.void)
    })
    if (this.ended) Deferred.unsafeDone(arrived, Exit.void)
    return {
      name,
      key,
      read,
      settled: Deferred.await(arrived).pipe(Effect.interruptible, Effect.timeout(settleMs), Effect.ignore),
      cancel: this.engine.run(this.box, ["bash", "--norc", "--noprofile", "-c", cancelScript, "effect-bash", this.path, name], this.user).pipe(
        Effect.map((output) => {
          const pid = Number(output.trim())
          return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
        }),
        Effect.orElseSucceed(() => undefined)
      ),
      onStatus: cell.onStatus,
      release: () => {
        this.waiting.delete(name)
        this.texts.delete(name)
        cell.clear()
      }
    }
  }

  close(): Effect.Effect<void> {
    return Scope.close(this.scope, Exit.void)
  }
}
