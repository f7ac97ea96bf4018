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

/** One way of running `bash -c <command>`. */
export interface Runner {
  /** Short, stable id used as a JSON key (`raw`, `execa`, `platform`, `ours`). */
  readonly id: string
  /** Human-readable name for tables. */
  readonly label: string
  /** Runs the command, collects stdout and stderr in memory, resolves once it has closed. */
  readonly run: (command: string) => Promise<void>
  /** Runs the command and writes its whole stdout to a file in `dir`; resolves once the file is complete. */
  readonly runToFile: (command: string, dir: string) => Promise<WrittenFile>
  /** Releases whatever the contender holds (runtimes, scopes). */
  readonly close: () => Promise<void>
}
