/**
 * The {@link BoxFiles} service on the container executor's boxes: each operation takes the session's
 * box (made on first use, as a command would), moves a tar archive through the engine's archive
 * endpoints, and lets the box go. Files written into the box belong to the box's user, so its
 * commands can change them.
 *
 * @internal
 */
import * as NodePath from "node:path"
import * as Effect from "effect/Effect"
import type { BoxFiles } from "../../../services/BoxFiles.js"
import { BoxFileError, BoxFileNotFoundError, BoxFileTooLargeError, defaultMaxBytes } from "../../../services/BoxFiles.js"
import type { ArchiveTooLargeError, ContainerEngine } from "../../../services/ContainerEngine.js"
import type { Boxes } from "./Boxes.js"
import type { TarError, TarTooLarge } from "./tarArchive.js"
import { extractTo, packDirectory, packFile, unpackEntries } from "./tarArchive.js"

/** Room for the tar headers around a file read: a file's archive is its bytes and a few 512-byte blocks. */
const headerRoom = 64 * 1024

/** How many links a read follows before it gives up (as the kernel's `ELOOP`, a little earlier). */
const maxLinks = 8

// Reads the box user's effective uid and gid (fields 3 of `Uid:` and `Gid:`), with builtins only.
const ownerScript = String.raw`
while read -r key _ effective _; do
  case $key in Uid:) u=$effective ;; Gid:) g=$effective ;; esac
done </proc/self/status
printf '%s:%s' "$u" "$g"
`

export interface BoxFilesOptions {
  readonly engine: ContainerEngine.Service
  readonly boxes: Boxes
  /** The workspace's path in the boxes: relative paths are relative to it. */
  readonly workspace: string
  /** The boxes' user, as configured (`uid:gid`, `uid`, a name). */
  readonly user: string
}

type EngineFailure = ContainerEngine.Error | ArchiveTooLargeError | TarError | TarTooLarge

export const makeBoxFiles = (options: BoxFilesOptions): BoxFiles.Service => {
  const { boxes, engine, workspace } = options
  const absolute = (path: string) => NodePath.posix.resolve(workspace, path)
  const capOf = (given: BoxFiles.Options | undefined) => given?.maxBytes ?? defaultMaxBytes

  /** What went wrong at `path`, as the service says it. */
  const failed = (path: string, maxBytes: number, error: EngineFailure): BoxFiles.Error => {
    switch (error._tag) {
      case "ContainerNotFound":
        return new BoxFileNotFoundError({ path, message: `${path}: no such file or directory in the box` })
      case "ArchiveTooLarge":
      case "TarTooLarge":
        return new BoxFileTooLargeError({ path, maxBytes, message: `${path}: larger than ${maxBytes} bytes` })
      default:
        return new BoxFileError({ path, message: `${path}: ${error.message}`, cause: error })
    }
  }

  /** Runs `use` on the session's box, which stays the session's (and may idle-stop) after. */
  const withBox = <A>(
    path: string,
    given: BoxFiles.Options | undefined,
    use: (box: string) => Effect.Effect<A, BoxFiles.Error>
  ): Effect.Effect<A, BoxFiles.Error> =>
    Effect.acquireUseRelease(
      boxes.acquire(given?.session ?? "").pipe(
        Effect.mapError((error) =>
          new BoxFileError({
            path,
            message: error._tag === "WorkspaceMissing"
              ? `${path}: the directory the boxes mount does not exist: ${error.path}`
              : `${path}: the session's box could not be started: ${error.message}`,
            cause: error
          })
        )
      ),
      (box) => use(box.id),
      (box) => boxes.release(box)
    )

  /** The box user's `uid:gid`: from the setting when it says both, else as the box reports it. */
  const ownerIn = (box: string, path: string): Effect.Effect<{ readonly uid: number; readonly gid: number }, BoxFiles.Error> => {
    const numeric = /^(\d+):(\d+)$/.exec(options.user)
    if (numeric !== null) return Effect.succeed({ uid: Number(numeric[1]), gid: Number(numeric[2]) })
    return engine.run(box, ["bash", "--norc", "--noprofile", "-c", ownerScript]).pipe(
      Effect.mapError((error) => failed(path, 0, error)),
      Effect.flatMap((output) => {
        const match = /^(\d+):(\d+)$/.exec(output.trim())
        return match === null
          ? Effect.fail(new BoxFileError({ path, message: `${path}: cannot learn the box's user (${JSON.stringify(output)})` }))
          : Effect.succeed({ uid: Number(match[1]), gid: Number(match[2]) })
      })
    )
  }

  const readFile: BoxFiles.Service["readFile"] = (path, given) =>
    Effect.suspend(() => {
      const maxBytes = capOf(given)
      const start = absolute(path)
      return withBox(start, given, (box) => {
        const read = (at: string, links: number): Effect.Effect<Uint8Array, BoxFiles.Error> =>
          engine.getArchive(box, at, maxBytes + headerRoom).pipe(
            Effect.flatMap(unpackEntries),
            Effect.mapError((error) => failed(at, maxBytes, error)),
            Effect.flatMap((entries) => {
              const [top] = entries
              if (top?.type === "symlink" && top.linkname !== undefined) {
                if (links >= maxLinks) return Effect.fail(new BoxFileError({ path: start, message: `${start}: too many levels of links` }))
                return read(NodePath.posix.resolve(NodePath.posix.dirname(at), top.linkname), links + 1)
              }
              if (top?.type !== "file" || top.bytes === undefined) {
                return Effect.fail(new BoxFileError({ path: start, message: `${start}: not a regular file (${top?.type ?? "empty archive"})` }))
              }
              if (top.bytes.length > maxBytes) {
                return Effect.fail(new BoxFileTooLargeError({ path: start, maxBytes, message: `${start}: larger than ${maxBytes} bytes` }))
              }
              return Effect.succeed(top.bytes)
            })
          )
        return read(start, 0)
      })
    }).pipe(Effect.withSpan("BoxFiles.readFile"))

  const writeFile: BoxFiles.Service["writeFile"] = (path, content, given) =>
    Effect.suspend(() => {
      const maxBytes = capOf(given)
      const target = absolute(path)
      const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content
      if (bytes.length > maxBytes) {
        return Effect.fail(new BoxFileTooLargeError({ path: target, maxBytes, message: `${target}: larger than ${maxBytes} bytes` }))
      }
      const directory = NodePath.posix.dirname(target)
      return withBox(target, given, (box) =>
        ownerIn(box, target).pipe(
          Effect.flatMap((owner) => packFile(NodePath.posix.basename(target), bytes, given?.mode ?? 0o644, owner)),
          Effect.flatMap((tar) => engine.putArchive(box, directory, tar)),
          Effect.mapError((error) =>
            error._tag === "ContainerNotFound"
              ? new BoxFileNotFoundError({ path: directory, message: `${directory}: no such directory in the box (writing ${target})` })
              : error._tag === "BoxFileError" || error._tag === "BoxFileNotFound" || error._tag === "BoxFileTooLarge"
              ? error
              : failed(target, maxBytes, error)
          )
        ))
    }).pipe(Effect.withSpan("BoxFiles.writeFile"))

  const upload: BoxFiles.Service["upload"] = (from, to, given) =>
    Effect.suspend(() => {
      const maxBytes = capOf(given)
      const target = absolute(to)
      return withBox(target, given, (box) =>
        ownerIn(box, target).pipe(
          Effect.flatMap((owner) =>
            packDirectory(from, owner, maxBytes).pipe(
              Effect.mapError((error) =>
                error._tag === "TarTooLarge"
                  ? new BoxFileTooLargeError({ path: target, maxBytes, message: `${target}: the host directory ${from} packs to more than ${maxBytes} bytes` })
                  : new BoxFileError({ path: target, message: `${target}: cannot read the host directory ${from}: ${error.message}`, cause: error })
              )
            )
          ),
          Effect.flatMap((tar) =>
            engine.putArchive(box, target, tar).pipe(Effect.mapError((error) =>
              error._tag === "ContainerNotFound"
                ? new BoxFileNotFoundError({ path: target, message: `${target}: no such directory in the box` })
                : failed(target, maxBytes, error)
            ))
          )
        ))
    }).pipe(Effect.withSpan("BoxFiles.upload"))

  const download: BoxFiles.Service["download"] = (from, to, given) =>
    Effect.suspend(() => {
      const maxBytes = capOf(given)
      const source = absolute(from)
      return withBox(source, given, (box) =>
        engine.getArchive(box, source, maxBytes).pipe(
          Effect.mapError((error) => failed(source, maxBytes, error)),
          Effect.flatMap((tar) =>
            extractTo(tar, NodePath.resolve(to), 1).pipe(
              Effect.mapError((error) =>
                new BoxFileError({ path: source, message: `${source}: cannot copy it to the host directory ${to}: ${error.message}`, cause: error })
              ),
              Effect.flatMap((rootType) =>
                rootType === "directory"
                  ? Effect.void
                  : Effect.fail(new BoxFileError({ path: source, message: `${source}: not a directory (${rootType ?? "empty archive"}); read a file with readFile` }))
              )
            )
          )
        ))
    }).pipe(Effect.withSpan("BoxFiles.download"))

  return { upload, download, readFile, writeFile }
}
