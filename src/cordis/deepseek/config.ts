/**
 * The plugin's configuration as `effect-bash/cordis` publishes it: the generic plugin's fields and
 * the DeepSeek harness adapter's own.
 */
import * as Schema from "effect/Schema"
import { configWith } from "../config.js"

/**
 * How a completion notice reaches an idle harness agent (see `NoticeDelivery`).
 */
const CompletionDelivery = Schema.String.pipe(
  Schema.filter((mode): mode is "wakeup" | "quiet" => mode === "wakeup" || mode === "quiet", {
    message: (issue) => `completionDelivery must be "wakeup" or "quiet", got ${JSON.stringify(issue.actual)}`
  })
)

const published = configWith({
  /**
   * How a completion notice reaches an idle harness agent: `wakeup` opens a turn for it (at most 3 in
   * a row until the user speaks), `quiet` only injects it into the agent's next step (default `wakeup`).
   */
  completionDelivery: Schema.optionalWith(CompletionDelivery, { exact: true })
})

/**
 * The configuration fields; every one is optional.
 */
export const EffectBashConfigFields = published.fields

/**
 * The decoded configuration.
 *
 * @since 0.1.0
 * @category models
 */
export type EffectBashConfig = typeof EffectBashConfigFields.Type

/**
 * The plugin's `Config`: a Standard Schema that accepts `undefined` (all defaults) and rejects an
 * unknown key or a bad value with an issue whose path and message name the field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Config = published.Config
