/**
 * Tar archives, the form an engine takes files in and gives them out (`PUT`/`GET
 * /containers/{id}/archive`; `tar` over exec on Kubernetes), through tar-stream (in memory) and tar-fs
 * (a host directory's tree, packed and extracted with its checks: no entry outside the directory, no
 * write through a link, no set-id bit). Both are optional peers, loaded on first use.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"

/** The tar libraries are not installed, or an archive could not be read or written: what failed. */
export class TarError extends Data.TaggedError("TarError")<{ readonly message: string; readonly cause?: unknown }> {}

/** The bytes packed so far passed the bound: nothing more was read. */
export class TarTooLarge extends Data.TaggedError("TarTooLarge")<{ readonly maxBytes: number }> {}

type TarStream = typeof import("tar-stream")
type TarFs = typeof import("tar-fs")

let loading: Promise<{ readonly stream: TarStream; readonly fs: TarFs }> | undefined

/** tar-stream and tar-fs, imported once. */
const libraries = Effect.tryPromise({
  try: () =>
    loading ??= Promise.all([import("tar-stream"), import("tar-fs")]).then(([stream, fs]) => ({
      stream: (stream as { default?: TarStream }).default ?? stream,
      fs: (fs as { default?: TarFs }).default ?? fs
    })).catch((error: unknown) => {
      loading = undefined
      throw error
    }),
  catch: (cause) =>
    new TarError({ message: "the box file service needs the tar-stream and tar-fs packages: npm install tar-stream@3 tar-fs@3", cause })
})

/** One entry of an archive held in memory. */
export interface TarEntry {
  /** Relative, `/`-separated, no trailing slash. */
  readonly name: string
  readonly type: "file" | "directory" | "symlink" | "other"
  readonly mode: number
  readonly uid: number
  readonly gid: number
  /** A link's target. */
  readonly linkname?: string | undefined
  /** A file's content. */
  readonly bytes?: Uint8Array | undefined
}

/** What {@link collect} needs of a stream (tar-stream's are streamx streams, not Node's). */
interface Source {
  on(event: "data", listener: (chunk: unknown) => void): unknown
  once(event: "error", listener: (error: unknown) => void): unknown
  once(event: "end", listener: () => void): unknown
  destroy(): unknown
}

/** Reads `readable` to its end, failing with {@link TarTooLarge} (and destroying it) past `maxBytes`. */
const collect = (readable: Source, maxBytes: number) =>
  Effect.async<Uint8Array, TarError | TarTooLarge>((resume) => {
    const chunks: Array<Buffer> = []
    let length = 0
    readable.on("data", (data) => {
      const chunk = data as Buffer
      length += chunk.length
      if (length > maxBytes) {
        readable.destroy()
        resume(Effect.fail(new TarTooLarge({ maxBytes })))
      } else chunks.push(chunk)
    })
    readable.once("error", (cause) => resume(Effect.fail(new TarError({ message: String(cause), cause }))))
    readable.once("end", () => resume(Effect.succeed(new Uint8Array(Buffer.concat(chunks)))))
    return Effect.sync(() => readable.destroy())
  })

/** An archive of one file, `name`, with `bytes`, `mode` and owner `uid:gid`. */
export const packFile = (
  name: string,
  bytes: Uint8Array,
  mode: number,
  owner: { readonly uid: number; readonly gid: number }
): Effect.Effect<Uint8Array, TarError> =>
  Effect.flatMap(libraries, ({ stream }) =>
    Effect.suspend(() => {
      const pack = stream.pack()
      pack.entry({ name, type: "file", mode, uid: owner.uid, gid: owner.gid, mtime: new Date() }, Buffer.from(bytes))
      pack.finalize()
      // A file's archive is its bytes and a few blocks: the caller bounded the bytes.
      return collect(pack, Number.POSITIVE_INFINITY).pipe(Effect.catchTag("TarTooLarge", (error) => Effect.die(error)))
    }))

/** The entries of an archive held in memory (a hard link reads as `other`). */
export const unpackEntries = (tar: Uint8Array): Effect.Effect<ReadonlyArray<TarEntry>, TarError> =>
  Effect.flatMap(libraries, ({ stream }) =>
    Effect.tryPromise({
      try: async () => {
        const extract = stream.extract()
        extract.end(Buffer.from(tar.buffer, tar.byteOffset, tar.byteLength))
        const entries: Array<TarEntry> = []
        for await (const entry of extract) {
          const chunks: Array<Buffer> = []
          for await (const chunk of entry) chunks.push(chunk as Buffer)
          const { header } = entry
          const type = header.type === "file" || header.type === "contiguous-file" ? "file"
            : header.type === "directory" || header.type === "symlink" ? header.type
            : "other"
          entries.push({
            name: header.name.replace(/^(\.\/)+/, "").replace(/\/+$/, ""),
            type,
            mode: header.mode ?? 0,
            uid: header.uid ?? 0,
            gid: header.gid ?? 0,
            linkname: header.linkname ?? undefined,
            ...(type === "file" ? { bytes: new Uint8Array(Buffer.concat(chunks)) } : {})
          })
        }
        return entries
      },
      catch: (cause) => new TarError({ message: `not a tar archive: ${String(cause)}`, cause })
    }))

/**
 * The tree of the host directory `directory` (its entries, not itself), owned in the archive by
 * `uid:gid`, modes as they are; links stay links. Fails past `maxBytes` of archive.
 */
export const packDirectory = (
  directory: string,
  owner: { readonly uid: number; readonly gid: number },
  maxBytes: number
): Effect.Effect<Uint8Array, TarError | TarTooLarge> =>
  Effect.flatMap(libraries, ({ fs }) =>
    Effect.try({
      try: () => NodeFs.readdirSync(directory).sort(),
      catch: (cause) => new TarError({ message: cause instanceof Error ? cause.message : String(cause), cause })
    }).pipe(Effect.flatMap((entries) => {
      // `entries`: the directory itself is not in the archive (its mode and owner are the box's).
      const pack = fs.pack(directory, {
        entries,
        umask: 0,
        map: (header) => ({ ...header, uid: owner.uid, gid: owner.gid })
      } as Parameters<TarFs["pack"]>[1])
      return collect(pack, maxBytes)
    })))

/**
 * Unpacks `tar` into the host directory `directory` (made when missing), dropping the first
 * `strip` components of each name; ownership stays this process's, set-id bits are dropped, and an
 * entry that would land outside the directory, or be written through a link, fails it. Returns the
 * type of the entry the strip made the directory itself (the archive's top one), if any.
 */
export const extractTo = (tar: Uint8Array, directory: string, strip: number): Effect.Effect<string | undefined, TarError> =>
  Effect.flatMap(libraries, ({ fs }) =>
    Effect.async<string | undefined, TarError>((resume) => {
      let rootType: string | undefined
      const extract = fs.extract(directory, {
        strip,
        chown: false,
        umask: 0,
        map: (header) => {
          if (header.name === "" && rootType === undefined) rootType = header.type
          return header
        }
      } as Parameters<TarFs["extract"]>[1])
      extract.once("error", (cause) => resume(Effect.fail(new TarError({ message: cause.message, cause }))))
      extract.once("finish", () => resume(Effect.succeed(rootType)))
      extract.end(Buffer.from(tar.buffer, tar.byteOffset, tar.byteLength))
      return Effect.sync(() => extract.destroy())
    }))
