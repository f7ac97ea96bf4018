/**
 * Types the services the plugin provides on upstream Cordis (`cordis` 4): `ctx.bash`, `ctx.bashEnv`,
 * `ctx.tasks`, and `ctx.get("bash")` & co. (Upstream's own `.d.ts` resolve under
 * `moduleResolution: "bundler"`, not under `nodenext`.)
 *
 * ```ts
 * import type {} from "effect-bash/cordis/cordis-types"
 * ```
 *
 * @since 0.1.0
 */
/// <reference types="cordis" preserve="true" />
// Loads the module before augmenting it (kept in the emitted declarations, unlike an empty type
// import): an augmentation bound first, through the package's `export *`, does not merge with its
// `Context`.
import type { CordisBashEnv } from "./BashEnvFacade.js"
import type { CordisBash } from "./BashFacade.js"
import type { CordisTasks } from "./TasksFacade.js"
import type { CordisTerminals } from "./TerminalsFacade.js"

declare module "cordis" {
  interface Context {
    /** The executor seam (provided by effect-bash). */
    bash: CordisBash
    /** The managed `DSH_*` environment (provided by effect-bash). */
    bashEnv: CordisBashEnv
    /** The background-task runtime (provided by effect-bash). */
    tasks: CordisTasks
    /** Persistent terminals (provided by effect-bash when its config turns them on). */
    terminals: CordisTerminals
  }
}
