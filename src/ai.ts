/**
 * effect-bash/ai: the tools as an `@effect/ai` toolkit. A separate entry point so that `@effect/ai` (an
 * optional peer) is loaded only by those who use it.
 *
 * @since 0.1.0
 */
export { CurrentToolSession } from "./services/CurrentToolSession.js"
export * as BashToolkit from "./tool/BashToolkit.js"
export type { BashAiTool, BashToolkitWithHandler } from "./tool/BashToolkit.js"
