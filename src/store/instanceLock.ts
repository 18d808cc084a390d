/**
 * One dlsync per state dir: a lock file `<state_dir>/dlsync.lock` holding the holder's pid.
 *
 * Invariants:
 * - Created with O_EXCL, so two processes never both believe they hold it.
 * - A lock whose pid is not alive (process.kill(pid, 0) → ESRCH), or whose pid now belongs to
 *   a process started at another time than the holder (Linux: /proc/<pid>/stat start time;
 *   guards against pid reuse, e.g. pid 1 in containers), is stale and taken over.
 * - Released with the scope, and only if the file is still ours.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect, Layer, Schema, type Scope } from "effect"
import { makeDirsSync } from "../fs/makeDirs.ts"
import { type LockHolder, otherHolderRunning, processStartTime } from "./lockHolder.ts"
import { type StateDiskFull, StoreOpenError, storeFailureOf } from "./StoreError.ts"

export const LOCK_FILE = "dlsync.lock"

/** Another live process holds the state dir; the CLI exits 75. */
export class InstanceLocked extends Schema.TaggedError<InstanceLocked>()("InstanceLocked", {
  stateDir: Schema.String,
  pid: Schema.Int
}) {
  override get message(): string {
    return `another dlsync (pid ${this.pid}) is already using the state dir ${this.stateDir}`
  }
}

/** Holds the lock for the lifetime of the current scope. */
export const acquireInstanceLock = (
  stateDir: string
): Effect.Effect<void, InstanceLocked | StoreOpenError | StateDiskFull, Scope.Scope> =>
  Effect.acquireRelease(tryLock(stateDir), (token) => Effect.sync(() => release(stateDir, token))).pipe(Effect.asVoid)

export const InstanceLock = {
  layer: (stateDir: string): Layer.Layer<never, InstanceLocked | StoreOpenError | StateDiskFull> =>
    Layer.effectDiscard(acquireInstanceLock(stateDir))
}

/**
 * The pid of the process holding the state dir's lock now (this process included), or
 * undefined when none does: no lock file, or one whose holder is gone.
 */
export const liveLockHolder = (stateDir: string): number | undefined => {
  const file = Path.join(stateDir, LOCK_FILE)
  if (heldHere.has(file)) return process.pid
  const holder = readHolder(file)
  return holder !== undefined && isAlive(holder) ? holder.pid : undefined
}

// ---------------------------------------------------------------------------------------

/** Locks taken by this process, so a second acquisition in-process is refused too. */
const heldHere = new Set<string>()

const tryLock = (stateDir: string): Effect.Effect<string, InstanceLocked | StoreOpenError | StateDiskFull> =>
  Effect.suspend((): Effect.Effect<string, InstanceLocked | StoreOpenError | StateDiskFull> => {
    const file = Path.join(stateDir, LOCK_FILE)
    if (heldHere.has(file)) return Effect.fail(new InstanceLocked({ stateDir, pid: process.pid }))
    const token = `${process.pid}\n${processStartTime(process.pid) ?? ""}\n`
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        makeDirsSync(stateDir, 0o700)
        const fd = Fs.openSync(file, Fs.constants.O_CREAT | Fs.constants.O_EXCL | Fs.constants.O_WRONLY, 0o600)
        try {
          Fs.writeSync(fd, token)
          Fs.fsyncSync(fd)
        } finally {
          Fs.closeSync(fd)
        }
        heldHere.add(file)
        return Effect.succeed(token)
      } catch (e) {
        if (!isErrno(e, "EEXIST")) {
          const failure = storeFailureOf(e, stateDir)
          if (failure?._tag === "StateDiskFull") return Effect.fail(failure)
          return Effect.fail(new StoreOpenError({ path: file, problem: `cannot create the lock file: ${message(e)}` }))
        }
      }
      const holder = readHolder(file)
      if (holder !== undefined && isAlive(holder)) return Effect.fail(new InstanceLocked({ stateDir, pid: holder.pid }))
      // Stale (or half-written by a holder that died at once): remove it and try again.
      try {
        Fs.unlinkSync(file)
      } catch (e) {
        if (!isErrno(e, "ENOENT")) {
          return Effect.fail(new StoreOpenError({ path: file, problem: `cannot remove a stale lock: ${message(e)}` }))
        }
      }
    }
    return Effect.fail(
      new StoreOpenError({ path: file, problem: "the lock file keeps changing; is another dlsync starting?" })
    )
  })

const release = (stateDir: string, token: string): void => {
  const file = Path.join(stateDir, LOCK_FILE)
  heldHere.delete(file)
  try {
    if (Fs.readFileSync(file, "utf8") === token) Fs.unlinkSync(file)
  } catch {
    // Already gone: nothing to release.
  }
}

const readHolder = (file: string): LockHolder | undefined => {
  try {
    const [pidText, start] = Fs.readFileSync(file, "utf8").split("\n")
    const pid = Number(pidText)
    if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
    return { pid, startTime: start === undefined || start === "" ? undefined : start }
  } catch {
    return undefined
  }
}

// A lock with our own pid was left by an earlier process that had it.
const isAlive = (holder: LockHolder): boolean => holder.pid !== process.pid && otherHolderRunning(holder)

const isErrno = (e: unknown, code: string): boolean => e instanceof Error && "code" in e && e.code === code

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))
