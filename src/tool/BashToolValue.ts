/**
 * The canonical result of a `bash` call (CONTRACT §2): what hosts store and replay, and what every
 * rendering and presentation is computed from.
 *
 * @since 0.1.0
 */
import type { BashRunResult } from "../services/BashExecutor.js"

/**
 * A completed foreground process, or a published background task.
 *
 * @since 0.1.0
 */
export type BashToolValue =
  | ({ readonly kind: "foreground" } & BashRunResult)
  | { readonly kind: "background"; readonly taskId: string }

/**
 * Whether a stored value has the shape of a {@link BashToolValue} (replays hand back `unknown`).
 *
 * @since 0.1.0
 */
export const isBashToolValue = (value: unknown): value is BashToolValue => {
  if (typeof value !== "object" || value === null) return false
  const kind = (value as { readonly kind?: unknown }).kind
  if (kind === "background") return typeof (value as { readonly taskId?: unknown }).taskId === "string"
  return kind === "foreground" && typeof (value as { readonly stdout?: unknown }).stdout === "object"
}
