/**
 * The canonical result of a `bash` call (CONTRACT §2): what hosts store and replay, and what every
 * rendering and presentation is computed from.
 *
 * @since 0.1.0
 */
import type { BashExecutor } from "../services/BashExecutor.js"

/**
 * A completed foreground process, or a published background task.
 *
 * @since 0.1.0
 */
export type BashToolValue =
  | ({ readonly kind: "foreground" } & BashExecutor.RunResult)
  | { readonly kind: "background"; readonly taskId: string }

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null

// Rendering and presentation read both streams' text: a stored value without them is not one of ours.
const isCollectedOutput = (value: unknown): boolean => isRecord(value) && typeof value["text"] === "string"

/**
 * Whether a stored value has the shape of a {@link BashToolValue} (replays hand back `unknown`).
 *
 * @since 0.1.0
 */
export const isBashToolValue = (value: unknown): value is BashToolValue => {
  if (!isRecord(value)) return false
  if (value["kind"] === "background") return typeof value["taskId"] === "string"
  return value["kind"] === "foreground" && isCollectedOutput(value["stdout"]) && isCollectedOutput(value["stderr"])
}
