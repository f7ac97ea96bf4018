/**
 * A confining {@link BashExecutor} test double: it runs nothing, and reports a sandbox denial for a
 * command that would write outside what the call's effective mode allows. The write detection is a
 * heuristic on the command string (`>`/`>>` redirects, `tee`, `touch`), enough to drive escalation
 * flows in tests.
 *
 * @since 0.1.0
 */
import { realpathSync } from "node:fs"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BashExecutor } from "../services/BashExecutor.js"
import { LocalBashExecutor } from "../index.js"
import type { ResolveDefaults } from "../layers/resolveSpec.js"
import { resolveSpec } from "../layers/resolveSpec.js"
import type { RecordedBashCall } from "./ScriptedBashExecutor.js"
import { makeScriptedExecutor } from "./internal/scriptedExecutor.js"
import { bashRunResult } from "./ScriptedBashExecutor.js"

/**
 * Settings of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeConfiningExecutorConfig {
  /** The default mode. Default `workspace-write`. */
  readonly sandboxMode?: BashExecutor.SandboxMode
  /** The root used when a call carries no sandbox policy. Default: the default workdir. */
  readonly workspaceRoot?: string
  /** Default workdir. Default `process.cwd()` at resolve time. */
  readonly cwd?: string
}

/**
 * The control surface of the double, for tests.
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeConfiningExecutor extends Context.Tag("effect-bash/FakeConfiningExecutor")<
  FakeConfiningExecutor,
  {
    /** Every run/start call so far, oldest first. */
    readonly calls: Effect.Effect<ReadonlyArray<RecordedBashCall>>
  }
>() {}

const redirectTarget = /(?:\d*|&)>>?\|?\s*([^\s;|&<>()]+)/g
const teeTargets = /\btee\s+(?:-[a-z]+\s+)*([^\s;|&<>()]+)/g
const touchTargets = /\btouch\s+([^\s;|&<>()]+)/g
const deviceFiles = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$/

/**
 * The files a command string appears to write, as written (quotes removed).
 *
 * @since 0.1.0
 * @category utils
 */
const writeTargets = (command: string): ReadonlyArray<string> =>
  [redirectTarget, teeTargets, touchTargets]
    .flatMap((pattern) => [...command.matchAll(pattern)].map((match) => (match[1] ?? "").replace(/^["']|["']$/g, "")))
    .filter((target) => target !== "" && !deviceFiles.test(target))

const isInside = (root: string, target: string): boolean => {
  const relative = path.relative(root, target)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/** The root a sandbox binds: its links resolved, as far as it exists. */
const canonical = (root: string): string => {
  try {
    return realpathSync(root)
  } catch {
    return root
  }
}

/** The first target the mode forbids, if any. */
const deniedTarget = (spec: BashExecutor.Spec, mode: BashExecutor.SandboxMode, root: string): string | undefined => {
  if (mode === "danger-full-access") return undefined
  return writeTargets(spec.command).find((target) =>
    mode === "read-only" || !isInside(root, path.resolve(spec.workdir, target))
  )
}

const make = (config: FakeConfiningExecutorConfig) =>
  Effect.gen(function*() {
    const defaultMode = config.sandboxMode ?? "workspace-write"
    const defaults: ResolveDefaults = { ...LocalBashExecutor.defaults, cwd: config.cwd }

    /** What the sandbox would have reported, and the stderr a denied write leaves. */
    const judge = (spec: BashExecutor.Spec): { readonly sandbox: BashExecutor.SandboxFacts; readonly stderr: string } => {
      const mode = spec.sandboxPolicy?.mode ?? defaultMode
      const root = canonical(spec.sandboxPolicy?.workspaceRoot ?? config.workspaceRoot ?? spec.workdir)
      const target = deniedTarget(spec, mode, root)
      return {
        sandbox: { mode, denied: target !== undefined },
        stderr: target === undefined ? "" : `bash: ${target}: Permission denied\n`
      }
    }

    const double = yield* makeScriptedExecutor({
      sandboxMode: defaultMode,
      defaultWorkdir: Effect.sync(() => config.cwd ?? process.cwd()),
      resolve: (request) => resolveSpec(defaults, request),
      answer: (spec) =>
        Effect.sync(() => {
          const { sandbox, stderr } = judge(spec)
          return bashRunResult({
            exitCode: sandbox.denied ? 1 : 0,
            timeoutMs: spec.timeoutMs,
            stderr: { text: stderr, truncated: false },
            sandbox
          })
        }),
      started: (scripted) =>
        Effect.gen(function*() {
          const { sandbox, stderr } = judge(scripted.spec)
          yield* scripted.emit("", stderr)
          yield* scripted.finish({ exitCode: sandbox.denied ? 1 : 0, sandbox })
        })
    })

    return Context.make(BashExecutor, double.executor).pipe(
      Context.add(FakeConfiningExecutor, { calls: double.calls })
    )
  })

/**
 * Provides {@link BashExecutor} (the double) and {@link FakeConfiningExecutor} (its controls).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: FakeConfiningExecutorConfig = {}
): Layer.Layer<BashExecutor | FakeConfiningExecutor> => Layer.effectContext(make(config))
