/**
 * This device's identity in app state and app storage: a random id created once per state
 * dir (`<state_dir>/device-id`, 0600) and a display name (`app_state.device_name`, else the
 * host name). The id never changes while the state dir lives, so entries written before a
 * restart stay this device's.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"
import { readFileIfExists } from "../auth/atomicFile.ts"
import { errnoCode } from "../fs/errno.ts"
import { makeDirsSync } from "../fs/makeDirs.ts"

export const DEVICE_ID_FILE = "device-id"

const DEVICE_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * The state dir's device id, created on first use. Two processes creating it at once agree
 * (the file is published with link(2), which never replaces). I/O failures are defects.
 */
export const loadDeviceId = (stateDir: string): Effect.Effect<string> =>
  Effect.sync(() => {
    const file = Path.join(stateDir, DEVICE_ID_FILE)
    const existing = readFileIfExists(file)?.trim()
    if (existing !== undefined && DEVICE_ID_PATTERN.test(existing)) return existing
    makeDirsSync(stateDir, 0o700)
    const temp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`
    const fd = Fs.openSync(temp, Fs.constants.O_CREAT | Fs.constants.O_EXCL | Fs.constants.O_WRONLY, 0o600)
    try {
      Fs.writeSync(fd, `${crypto.randomUUID()}\n`)
      Fs.fsyncSync(fd)
    } finally {
      Fs.closeSync(fd)
    }
    try {
      // A corrupt file (not an id) is replaced; otherwise the first writer wins.
      if (existing !== undefined) Fs.renameSync(temp, file)
      else Fs.linkSync(temp, file)
    } catch (e) {
      if (errnoCode(e) !== "EEXIST") throw e
    } finally {
      Fs.rmSync(temp, { force: true })
    }
    return Fs.readFileSync(file, "utf8").trim()
  })

/** `app_state.device_name` when set, else the host name. */
export const deviceName = (configured: string | undefined): string =>
  configured !== undefined && configured.trim() !== "" ? configured.trim() : Os.hostname()
