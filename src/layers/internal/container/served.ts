/**
 * The protocol of every call in a box: `wrapper.sh` run with `serve` (a served exec, kept in the box,
 * that runs its calls one after another, so a call costs no exec of the engine's) or with `once` (an
 * exec of the call's own, for a call with input or with variables bash cannot export: the engine
 * gives the exec that environment as it is, and the rest of its stdin is the command's).
 *
 * For each call the host writes one line, the call's key (eight numbers below 2^31 - 1 and a token of
 * 128 random bits), then NUL-terminated fields: the workdir, `argv` or `fd` (a command too long for an
 * argument reaches its shell over a pipe), the command, the call's variables (`NAME=value`) and an
 * empty field. The wrapper's own lines on the exec's stdout start with a NUL, the token and a space:
 * `pid N` (the leader's, before it runs anything: it waits for the host's `go` line, and an exec the
 * host closes instead runs nothing), `nowd`, then the leader's status tagged under the key's first four
 * numbers (`wrapper.ts`), `empty k5 k6` once a group that outlived its leader is empty, and `end k7
 * k8` once it is, on stdout and on stderr: the call's output ends there. The command never sees the
 * key or the token (they are consumed before it starts, the wrapper's memory is closed to it), so it
 * can neither end its call nor forge its status; a line it writes after a token it stole from its own
 * output (its stdout is a pipe it can open for reading) is no status, and a status is taken once. An
 * exec whose output a process of the command still holds (one that left the group) says no `end` and
 * serves no more: its output ends when the engine closes it.
 *
 * @internal
 */
import * as NodeCrypto from "node:crypto"
import { tooLongForArgv } from "../spawner/shellInvocation.js"
import type { StatusKey } from "./wrapper.js"
import { makeStatusKey, tagModulus } from "./wrapper.js"

/** A served call's key: the line sent first, the status key, and the lines that end the call. */
export interface ServedKey {
  readonly line: string
  readonly status: StatusKey
  /** What precedes each of the wrapper's lines: a NUL, the token, a space. */
  readonly marker: Uint8Array
  /** The line that closes the call's output on each stream. */
  readonly endLine: string
}

/** A key from eight random numbers and a random token. */
export const randomServedKey = (): ServedKey => {
  const bytes = NodeCrypto.randomBytes(64 + 16)
  const numbers = Array.from({ length: 8 }, (_, i) => (bytes.readBigUInt64BE(i * 8) >> 2n) % tagModulus)
  const token = bytes.subarray(64).toString("hex")
  return {
    line: `${numbers.join(" ")} ${token}\n`,
    status: makeStatusKey(numbers.slice(0, 6)),
    marker: Buffer.from(`\0${token} `, "latin1"),
    endLine: `end ${numbers[6]} ${numbers[7]}`
  }
}

/**
 * Bash can export only a variable whose name is an identifier, and sets or changes some itself:
 * a call whose environment holds another name runs in an exec of its own (`once`), which the engine
 * gives that environment as it is.
 */
const exportable = /^[A-Za-z_][A-Za-z0-9_]*$/
const bashOwn = new Set([
  "EUID", "UID", "PPID", "GROUPS", "FUNCNAME", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "HISTCMD",
  "EPOCHSECONDS", "EPOCHREALTIME", "DIRSTACK", "PIPESTATUS", "IFS", "OPTIND", "OPTARG", "OPTERR", "SHLVL", "_",
  "COMP_WORDBREAKS"
])

/** Whether the served wrapper can give a command exactly `env` (one `wrapperEnv` made). */
export const servable = (env: Readonly<Record<string, string>>): boolean => {
  for (const name in env) {
    if (!exportable.test(name) || bashOwn.has(name) || name.startsWith("BASH")) return false
  }
  return true
}

const encoder = new TextEncoder()

/** The call's request: its key line, workdir, command and variables (none for a `once` exec: the engine gives them). */
export const servedRequest = (key: ServedKey, cwd: string, command: string, env: Readonly<Record<string, string>>): Uint8Array => {
  const fields = [cwd, tooLongForArgv(command) ? "fd" : "argv", command, ...Object.entries(env).map(([name, value]) => `${name}=${value}`), ""]
  return encoder.encode(`${key.line}${fields.join("\0")}\0`)
}

/** The host's word that lets a served leader run its command. */
export const goLine: Uint8Array = encoder.encode("go\n")

/** Part of one stream of a served exec: the command's bytes, or one of the wrapper's lines. */
export type Piece = { readonly data: Uint8Array } | { readonly line: string }

/** More than any line of the wrapper's. */
const lineLimit = 4096

/**
 * Splits one stream of a served exec into the command's bytes and the wrapper's lines (after the
 * call's marker). Bytes that may start a marker are held until the next chunk tells; the rest is
 * passed on at once.
 */
export class MarkerScanner {
  private held: Buffer = Buffer.alloc(0)

  constructor(private readonly marker: Uint8Array) {}

  push(chunk: Uint8Array): Array<Piece> {
    const data = this.held.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.held, chunk])
    this.held = Buffer.alloc(0)
    const pieces: Array<Piece> = []
    const emit = (from: number, to: number) => {
      if (to > from) pieces.push({ data: data.subarray(from, to) })
    }
    let position = 0
    for (;;) {
      const found = data.indexOf(this.marker, position)
      if (found === -1) {
        const keep = this.partialMarkerAt(data, position)
        emit(position, keep)
        this.held = Buffer.from(data.subarray(keep))
        return pieces
      }
      emit(position, found)
      const newline = data.indexOf(10, found + this.marker.length)
      if (newline === -1) {
        if (data.length - found <= lineLimit) {
          this.held = Buffer.from(data.subarray(found))
          return pieces
        }
        // Too long for a line of the wrapper's: the command's bytes.
        emit(found, found + 1)
        position = found + 1
        continue
      }
      pieces.push({ line: data.toString("latin1", found + this.marker.length, newline) })
      position = newline + 1
    }
  }

  /** The stream has ended: what was held is the command's. */
  end(): Uint8Array | undefined {
    const held = this.held
    this.held = Buffer.alloc(0)
    return held.length === 0 ? undefined : held
  }

  /** Where a marker cut short by the chunk's end may start (`data.length` when none can). */
  private partialMarkerAt(data: Buffer, from: number): number {
    for (let at = Math.max(from, data.length - this.marker.length + 1); at < data.length; at++) {
      if (data[at] === 0 && data.subarray(at).equals(this.marker.subarray(0, data.length - at))) return at
    }
    return data.length
  }
}
