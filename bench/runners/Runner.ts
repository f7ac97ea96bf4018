/**
 * What every contender in the benchmark offers: the same work, done its own way.
 */

/**
 * The shell invocation every contender uses, the same as our executor's: no rc files, so a
 * `~/.bashrc` (which bash sources when stdin is a socket) never becomes part of the work.
 */
export const bashArgs = (command: string): Array<string> => ["--norc", "--noprofile", "-c", command]

/** A file a contender wrote a whole stdout stream to. */
export interface WrittenFile {
  readonly path: string
}

/**
 * What a contender is: a way to start a process (`process`), an executor service (`executor`), or a
 * model-facing `bash` tool called through a harness registry (`tool`).
 */
export type Level = "process" | "executor" | "tool"

/** One way of running `bash -c <command>`. */
export interface Runner {
  /** Short, stable id used as a JSON key (`raw`, `execa`, `platform`, `reference`, `ours`, ...). */
  readonly id: string
  /** Human-readable name for tables. */
  readonly label: string
  readonly level: Level
  /** Runs the command, collects stdout and stderr in memory, resolves once it has closed. */
  readonly run: (command: string) => Promise<void>
  /**
   * Runs the command and writes its whole stdout to a file in `dir`; resolves once the file is
   * complete. Absent at the tool level (a tool's output goes to the model).
   */
  readonly runToFile?: (command: string, dir: string) => Promise<WrittenFile>
  /** Releases whatever the contender holds (runtimes, scopes). */
  readonly close: () => Promise<void>
}
