/**
 * The files of a session's box, for an agent's other tools: seed it from a host directory, copy it
 * out to one, read a file, write a file. Each goes through the engine's archive endpoints (tar over
 * exec on Kubernetes), so it works on an engine that shares no file system with the host, and each
 * is bounded: a read or a copy larger than its byte cap fails, having read no more than that.
 *
 * The container executor's layer provides it (`DockerBashExecutor.layer`): the session's box is the
 * one its commands run in, made on first use by whichever comes first.
 */
import type * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Data from "effect/Data"

/**
 * A path is not in the box (or a parent directory a write needs).
 *
 * @since 0.2.0
 * @category errors
 */
export class BoxFileNotFoundError extends Data.TaggedError("BoxFileNotFound")<{
  /** The path in the box. */
  readonly path: string
  readonly message: string
}> {}

/**
 * A read, a copy out or an upload is larger than its byte cap.
 *
 * @since 0.2.0
 * @category errors
 */
export class BoxFileTooLargeError extends Data.TaggedError("BoxFileTooLarge")<{
  /** The path in the box (for an upload, where it was going). */
  readonly path: string
  /** The cap, in bytes. */
  readonly maxBytes: number
  readonly message: string
}> {}

/**
 * Any other failure: the path is not a file (or not a directory), a host directory cannot be read or
 * written, the box cannot be made, the engine refused or did not answer.
 *
 * @since 0.2.0
 * @category errors
 */
export class BoxFileError extends Data.TaggedError("BoxFileError")<{
  /** The path in the box. */
  readonly path: string
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The box file service.
 *
 * @since 0.2.0
 * @category tags
 */
export class BoxFiles extends Context.Tag("effect-bash/BoxFiles")<BoxFiles, BoxFiles.Service>() {}

/**
 * The types of the {@link BoxFiles} service.
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace BoxFiles {
  /**
   * Any error of the service.
   *
   * @since 0.2.0
   * @category errors
   */
  export type Error = BoxFileNotFoundError | BoxFileTooLargeError | BoxFileError

  /**
   * Which box, and how much may move.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Options {
    /** The session whose box it is (its `DSH_SESSION_ID`); the layer's own box when absent. */
    readonly session?: string | undefined
    /** The cap on the bytes moved (the archive's, for a directory): {@link defaultMaxBytes} when absent. */
    readonly maxBytes?: number | undefined
  }

  /**
   * The operations. A relative box path is relative to the workspace's path (`workspaceRoot`, else
   * `cwd`); files written land as the box's user, so its commands can change them.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** Copies the tree of the host directory `from` (its entries, not itself) into the box's existing directory `to`. */
    readonly upload: (from: string, to: string, options?: Options) => Effect.Effect<void, Error>
    /**
     * Copies the tree of the box's directory `from` (its entries, not itself) into the host directory
     * `to` (made when missing): nothing lands outside it, no write goes through a link, no set-id bit is kept.
     */
    readonly download: (from: string, to: string, options?: Options) => Effect.Effect<void, Error>
    /** The bytes of the file at `path` (a link is followed, in the box). */
    readonly readFile: (path: string, options?: Options) => Effect.Effect<Uint8Array, Error>
    /** Writes `bytes` to the file at `path` (its directory must exist), `mode` 0644 unless given. */
    readonly writeFile: (
      path: string,
      bytes: Uint8Array | string,
      options?: Options & { readonly mode?: number | undefined }
    ) => Effect.Effect<void, Error>
  }
}

/**
 * The byte cap of an operation that names none: 64 MiB.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultMaxBytes = 64 * 1024 * 1024
