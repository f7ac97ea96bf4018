/**
 * The six terminal tools side by side, as the reference names them: `terminal_open` (`Open`),
 * `terminal_send` (`Send`), `terminal_read` (`Read`), `terminal_signal` (`Signal`),
 * `terminal_close` (`Close`) and `terminal_list` (`List`) — each its parameters, value schema,
 * render and definition.
 *
 * @since 0.2.0
 */
export * as Close from "./TerminalCloseTool.js"
export * as List from "./TerminalListTool.js"
export * as Open from "./TerminalOpenTool.js"
export * as Read from "./TerminalReadTool.js"
export * as Send from "./TerminalSendTool.js"
export * as Signal from "./TerminalSignalTool.js"
