/**
 * A child of the layer: spawned by the host (`Direct`) or by its launcher (`Launched`).
 *
 * @internal
 */
import * as Data from "effect/Data"
import type * as ChildProcess from "node:child_process"
import type { LaunchedChild } from "./Launcher.js"

export type SpawnedChild = Data.TaggedEnum<{
  Direct: { readonly child: ChildProcess.ChildProcess }
  Launched: { readonly child: LaunchedChild }
}>

export const SpawnedChild = Data.taggedEnum<SpawnedChild>()
