/**
 * The CLI's logger: one logfmt line per entry on **stderr**. Effect's default logger writes to
 * stdout, which would corrupt `run`'s output and the MCP stdio protocol.
 */
import * as Logger from "effect/Logger"

/**
 * Replaces the default logger with a logfmt logger writing to stderr.
 */
export const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))
