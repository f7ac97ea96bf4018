/**
 * Watches a confined command's stderr, as it is read, for the runner's dialect: a denial text
 * anywhere (case-insensitive), and the first line that reports the runner's own failure. It sees the
 * whole stream, not only the tail the collector keeps.
 *
 * @internal
 */

/**
 * What a runner writes when it denies an access, and how its own failure lines begin.
 */
export interface RunnerDialect {
  /** Lower-case text of a denied access, e.g. `read-only file system`. */
  readonly denial: string
  /** How a line of the runner's own failure begins, e.g. `bwrap: `. */
  readonly failurePrefix: string
  /**
   * How a failure line begins that a change of the host's mount table during the runner's set-up
   * causes, and that the next start does not meet again.
   */
  readonly mountRacePrefix?: string
}

// A line longer than this is scanned in pieces; only its start can be a runner failure.
const maxCarry = 8192
const maxFailureLine = 1000

/**
 * One stream's watch.
 */
export class RunnerWatch {
  private readonly decoder = new TextDecoder()
  private carry = ""
  private carryAtLineStart = true
  private sawDenial = false
  private failure: string | undefined

  constructor(private readonly dialect: RunnerDialect) {}

  /** Feeds the next chunk of the stream. */
  feed(chunk: Uint8Array): void {
    const lines = (this.carry + this.decoder.decode(chunk, { stream: true })).split("\n")
    this.carry = lines.pop()!
    for (const line of lines) {
      this.scan(line, this.carryAtLineStart)
      this.carryAtLineStart = true
    }
    if (this.carry.length > maxCarry) {
      this.scan(this.carry, this.carryAtLineStart)
      // Keep enough to find a denial text that straddles the cut.
      this.carry = this.carry.slice(-this.dialect.denial.length)
      this.carryAtLineStart = false
    }
  }

  private scan(line: string, atLineStart: boolean): void {
    if (!this.sawDenial && line.toLowerCase().includes(this.dialect.denial)) this.sawDenial = true
    if (this.failure === undefined && atLineStart && line.startsWith(this.dialect.failurePrefix)) {
      this.failure = line.slice(0, maxFailureLine)
    }
  }

  /** The stream so far contains the denial text. */
  get denied(): boolean {
    return this.sawDenial || this.carry.toLowerCase().includes(this.dialect.denial)
  }

  /** The first line of the runner's own failure, if any. */
  get runnerFailure(): string | undefined {
    if (this.failure !== undefined) return this.failure
    return this.carryAtLineStart && this.carry.startsWith(this.dialect.failurePrefix)
      ? this.carry.slice(0, maxFailureLine)
      : undefined
  }
}
