/**
 * Durable whole-file replacement for small secret files (tokens, device id).
 *
 * Invariants:
 * - The file is either its old content or its new content, never a mix: the new bytes go
 *   to a fresh temp file (O_EXCL, mode 0600) in the same directory, are fsynced, renamed
 *   over the target, and the directory is fsynced so the rename itself survives a crash.
 * - The file never exists with a mode wider than 0600, not even as a temp file.
 * - A temp file left by a crash is named `<file>.tmp-…` and is removed by the next write.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { errnoCode } from "../fs/errno.ts"
import { fsyncDirSync } from "../fs/fsyncDir.ts"
import { makeDirsSync } from "../fs/makeDirs.ts"

/** Replaces `file` with `data` durably (see the invariants above). Throws on I/O failure. */
export const writeFileAtomic = (file: string, data: string): void => {
  const dir = Path.dirname(file)
  makeDirsSync(dir, 0o700)
  removeStaleTemps(file)
  const temp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`
  const fd = Fs.openSync(temp, Fs.constants.O_CREAT | Fs.constants.O_EXCL | Fs.constants.O_WRONLY, 0o600)
  try {
    Fs.fchmodSync(fd, 0o600)
    Fs.writeSync(fd, data)
    Fs.fsyncSync(fd)
  } catch (e) {
    Fs.closeSync(fd)
    Fs.rmSync(temp, { force: true })
    throw e
  }
  Fs.closeSync(fd)
  try {
    Fs.renameSync(temp, file)
  } catch (e) {
    Fs.rmSync(temp, { force: true })
    throw e
  }
  fsyncDirSync(dir)
}

/** Removes `file` and makes the removal durable; false when it did not exist. */
export const removeFileDurably = (file: string): boolean => {
  try {
    Fs.unlinkSync(file)
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return false
    throw e
  }
  fsyncDirSync(Path.dirname(file))
  return true
}

/** The file's text, or undefined when it does not exist. */
export const readFileIfExists = (file: string): string | undefined => {
  try {
    return Fs.readFileSync(file, "utf8")
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined
    throw e
  }
}

// ---------------------------------------------------------------------------------------

/** Temp files of earlier writers that died between create and rename. */
const removeStaleTemps = (file: string): void => {
  const dir = Path.dirname(file)
  const prefix = `${Path.basename(file)}.tmp-`
  let names: Array<string>
  try {
    names = Fs.readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length).split("-")[0])
    // A temp of a live writer (another process mid-write) is not ours to remove.
    if (Number.isSafeInteger(pid) && pid !== process.pid && isProcessAlive(pid)) continue
    Fs.rmSync(Path.join(dir, name), { force: true })
  }
}

const isProcessAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errnoCode(e) !== "ESRCH"
  }
}
