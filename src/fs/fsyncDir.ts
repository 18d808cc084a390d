/**
 * fsync of a directory, so that a create, rename or unlink in it survives power loss.
 * The one implementation for every caller (token files, the mirror's local operations,
 * the transfer engine's landing path).
 *
 * Some file systems cannot sync a directory: SMB/CIFS and NFS mounts of a NAS and many
 * FUSE file systems answer EINVAL or ENOTSUP (some EPERM, EISDIR or EBADF, even from the
 * open). The change itself has happened then and the mount gives no stronger promise to
 * wait for, so the failure is tolerated instead of failing the write that preceded it.
 * Any other error (EIO, ENOENT…) still throws.
 */
import * as Fs from "node:fs"
import { errnoCode } from "./errno.ts"

/** Errors that mean "this file system cannot fsync a directory". */
const DIR_SYNC_UNSUPPORTED = new Set(["EINVAL", "ENOTSUP", "EOPNOTSUPP", "EISDIR", "EPERM", "EBADF"])

/** True for a failure that only says the file system cannot sync directories. */
export const isDirSyncUnsupported = (e: unknown): boolean => DIR_SYNC_UNSUPPORTED.has(errnoCode(e) ?? "")

/** Blocking form, for the synchronous callers (atomic small files, local operations). */
export const fsyncDirSync = (dir: string): void => {
  let fd: number | undefined
  try {
    fd = Fs.openSync(dir, Fs.constants.O_RDONLY)
    Fs.fsyncSync(fd)
  } catch (e) {
    if (!isDirSyncUnsupported(e)) throw e
  } finally {
    if (fd !== undefined) Fs.closeSync(fd)
  }
}

/** Non-blocking form, for the transfer engine (it syncs while other transfers run). */
export const fsyncDir = (dir: string): Promise<void> =>
  new Promise((resolve, reject) =>
    Fs.open(dir, Fs.constants.O_RDONLY, (openError, fd) => {
      if (openError !== null) return isDirSyncUnsupported(openError) ? resolve() : reject(openError)
      Fs.fsync(fd, (syncError) =>
        Fs.close(fd, (closeError) => {
          const error = syncError ?? closeError
          if (error === null || isDirSyncUnsupported(error)) resolve()
          else reject(error)
        })
      )
    })
  )
