/**
 * A child of the layer: spawned by `posix_spawn` (`Posix`) or by `node:child_process` (`Direct`).
 *
 * @internal
 */
import * as Data from "effect/Data"
import type * as ChildProcess from "node:child_process"
import type { PosixChild } from "./posixSpawn.js"

export type SpawnedChild = Data.TaggedEnum<{
  Direct: { readonly child: ChildProcess.ChildProcess }
  Posix: { readonly child: PosixChild }
}>

export const SpawnedChild = Data.taggedEnum<SpawnedChild>()
