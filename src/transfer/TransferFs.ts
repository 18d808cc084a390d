/**
 * The file-system seam of the transfer engine: every disk operation a transfer makes goes
 * through this service, so tests can inject ENOSPC, EIO or a short write without a full
 * disk. The byte path (`writev`, `fdatasync`) keeps Node's callback form: it runs once per
 * large buffer and must not allocate a promise per call; the rest are promises.
 */
import * as Fs from "node:fs"
import { Context, Layer } from "effect"
import { fsyncDir } from "../fs/fsyncDir.ts"

export type WriteCallback = (error: NodeJS.ErrnoException | null, written: number) => void
export type DoneCallback = (error: NodeJS.ErrnoException | null) => void

export interface TransferFsShape {
  /** Opens (creating if needed) a file for positional reads and writes; `truncate` empties it. */
  readonly openPartial: (path: string, truncate?: boolean) => Promise<number>
  /** Positional gather write; may write less than asked (the caller continues). */
  readonly writev: (fd: number, buffers: ReadonlyArray<Buffer>, position: number, cb: WriteCallback) => void
  readonly fdatasync: (fd: number, cb: DoneCallback) => void
  readonly fsync: (fd: number) => Promise<void>
  readonly ftruncate: (fd: number, length: number) => Promise<void>
  /** Size of an open file. */
  readonly fsize: (fd: number) => Promise<number>
  readonly close: (fd: number) => Promise<void>
  /** Size of the file at `path`, or undefined when there is none. */
  readonly size: (path: string) => Promise<number | undefined>
  readonly mkdirp: (path: string) => Promise<void>
  readonly rename: (from: string, to: string) => Promise<void>
  /** fsync of a directory, so that a rename into it survives power loss (see fs/fsyncDir.ts). */
  readonly fsyncDir: (path: string) => Promise<void>
  /** Sets the modification (and access) time of an open file. */
  readonly setMtime: (fd: number, mtime: Date) => Promise<void>
  readonly unlink: (path: string) => Promise<void>
  /** The first `maxBytes` of a small file as UTF-8, or undefined when there is none. */
  readonly readHead: (path: string, maxBytes: number) => Promise<string | undefined>
  /** Bytes available to an unprivileged user on the file system holding `path`. */
  readonly freeBytes: (path: string) => Promise<number>
}

export class TransferFs extends Context.Service<TransferFs, TransferFsShape>()("dlsync/transfer/TransferFs") {
  static readonly layer = Layer.sync(TransferFs, () => TransferFs.of(nodeTransferFs))
}

/** The real file system. */
export const nodeTransferFs: TransferFsShape = {
  openPartial: (path, truncate = false) =>
    new Promise((resolve, reject) =>
      Fs.open(
        path,
        Fs.constants.O_RDWR | Fs.constants.O_CREAT | (truncate ? Fs.constants.O_TRUNC : 0),
        0o644,
        (e, fd) => (e === null ? resolve(fd) : reject(e))
      )
    ),
  writev: (fd, buffers, position, cb) => Fs.writev(fd, buffers, position, cb),
  fdatasync: (fd, cb) => Fs.fdatasync(fd, cb),
  fsync: (fd) => callbackToPromise((cb) => Fs.fsync(fd, cb)),
  ftruncate: (fd, length) => callbackToPromise((cb) => Fs.ftruncate(fd, length, cb)),
  fsize: (fd) => new Promise((resolve, reject) => Fs.fstat(fd, (e, st) => (e === null ? resolve(st.size) : reject(e)))),
  close: (fd) => callbackToPromise((cb) => Fs.close(fd, cb)),
  size: (path) =>
    Fs.promises.stat(path).then(
      (st) => (st.isFile() ? st.size : undefined),
      (e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))
    ),
  mkdirp: (path) => Fs.promises.mkdir(path, { recursive: true }).then(() => undefined),
  rename: (from, to) => Fs.promises.rename(from, to),
  fsyncDir,
  setMtime: (fd, mtime) => callbackToPromise((cb) => Fs.futimes(fd, mtime, mtime, cb)),
  unlink: (path) =>
    Fs.promises.unlink(path).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))),
  readHead: async (path, maxBytes) => {
    const handle = await Fs.promises
      .open(path, "r")
      .catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e)))
    if (handle === undefined) return undefined
    try {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(maxBytes), 0, maxBytes, 0)
      return buffer.toString("utf8", 0, bytesRead)
    } finally {
      await handle.close()
    }
  },
  freeBytes: (path) => Fs.promises.statfs(path).then((s) => s.bavail * s.bsize)
}

// ---------------------------------------------------------------------------------------

const callbackToPromise = (f: (cb: DoneCallback) => void): Promise<void> =>
  new Promise((resolve, reject) => f((e) => (e === null ? resolve() : reject(e))))
