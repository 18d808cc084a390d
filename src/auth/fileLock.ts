/**
 * A lock file shared by the processes using one state dir (the daemon, `dlsync status`,
 * `dlsync login`), held only around a token refresh.
 *
 * Invariants:
 * - Taken by creating the file with O_EXCL; it holds `pid`, the process start time and a
 *   random nonce, so release removes it only while it is still ours.
 * - A lock whose holder is gone (no such pid, or the pid now belongs to a process started
 *   at another time, or it names this process but this process does not hold it) is stale.
 *   A stale lock is moved aside with rename and removed only if the moved file is the one
 *   judged stale; otherwise it is put back with link(2), which never replaces a newer lock.
 * - Waiting polls; it gives up after `timeoutMs` with an error naming the holder.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Duration, Effect } from "effect"
import { describeError, errnoCode } from "../fs/errno.ts"
import { makeDirsSync } from "../fs/makeDirs.ts"
import { wallClockMs } from "../pacing/systemClock.ts"
import { type LockHolder, otherHolderRunning, processStartTime } from "../store/lockHolder.ts"
import { TokenStoreError } from "./AuthError.ts"
import { readFileIfExists } from "./atomicFile.ts"

export interface FileLockOptions {
  /** How often a waiting process looks again. */
  readonly pollMs: number
  /** How long to wait for a live holder before failing. */
  readonly timeoutMs: number
}

/** A refresh takes one token request (at most a minute); waiting longer means something is wrong. */
export const DEFAULT_FILE_LOCK_OPTIONS: FileLockOptions = { pollMs: 25, timeoutMs: 120_000 }

/** Runs `effect` while holding the lock file; the lock is released however it ends. */
export const withFileLock = <A, E, R>(
  lockFile: string,
  effect: Effect.Effect<A, E, R>,
  options: FileLockOptions = DEFAULT_FILE_LOCK_OPTIONS
): Effect.Effect<A, E | TokenStoreError, R> =>
  Effect.acquireUseRelease(
    acquire(lockFile, options),
    () => effect,
    (nonce) => Effect.sync(() => release(lockFile, nonce))
  )

// ---------------------------------------------------------------------------------------

/** Lock files this process holds (a lock naming our pid but absent here is stale). */
const heldHere = new Set<string>()

const acquire = Effect.fnUntraced(function* (
  lockFile: string,
  options: FileLockOptions
): Effect.fn.Return<string, TokenStoreError> {
  const waited = { ms: 0 }
  for (;;) {
    const outcome = yield* Effect.try({
      try: () => tryAcquire(lockFile),
      catch: (e) => new TokenStoreError({ path: lockFile, problem: `cannot take the lock: ${describeError(e)}` })
    })
    if (outcome.kind === "acquired") return outcome.nonce
    if (waited.ms >= options.timeoutMs) {
      return yield* new TokenStoreError({
        path: lockFile,
        problem: `held by pid ${outcome.holderPid ?? "?"} for more than ${options.timeoutMs} ms`
      })
    }
    yield* Effect.sleep(Duration.millis(options.pollMs))
    waited.ms += options.pollMs
  }
})

type Attempt =
  | { readonly kind: "acquired"; readonly nonce: string }
  | { readonly kind: "busy"; readonly holderPid: number | undefined }

const tryAcquire = (lockFile: string): Attempt => {
  makeDirsSync(Path.dirname(lockFile), 0o700)
  const nonce = `${process.pid}\n${processStartTime(process.pid) ?? ""}\n${Math.random().toString(36).slice(2)}\n`
  try {
    const fd = Fs.openSync(lockFile, Fs.constants.O_CREAT | Fs.constants.O_EXCL | Fs.constants.O_WRONLY, 0o600)
    try {
      Fs.writeSync(fd, nonce)
    } finally {
      Fs.closeSync(fd)
    }
    heldHere.add(lockFile)
    return { kind: "acquired", nonce }
  } catch (e) {
    if (errnoCode(e) !== "EEXIST") throw e
  }
  const content = readFileIfExists(lockFile)
  if (content === undefined) return { kind: "busy", holderPid: undefined } // released meanwhile: retry at once
  const holder = parseHolder(content)
  // An empty or partial file is a holder that died between create and write, or one writing now.
  if (holder === undefined) {
    if (ageMs(lockFile) > 5_000) removeIfStill(lockFile, content)
    return { kind: "busy", holderPid: undefined }
  }
  if (!isAlive(holder, lockFile)) removeIfStill(lockFile, content)
  return { kind: "busy", holderPid: holder.pid }
}

const release = (lockFile: string, nonce: string): void => {
  heldHere.delete(lockFile)
  if (readFileIfExists(lockFile) === nonce) Fs.rmSync(lockFile, { force: true })
}

/** Moves the lock aside; keeps it removed only when it is the content judged stale. */
const removeIfStill = (lockFile: string, content: string): void => {
  const aside = `${lockFile}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`
  try {
    Fs.renameSync(lockFile, aside)
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return
    throw e
  }
  if (readFileIfExists(aside) !== content) {
    try {
      Fs.linkSync(aside, lockFile)
    } catch (e) {
      if (errnoCode(e) !== "EEXIST") throw e
    }
  }
  Fs.rmSync(aside, { force: true })
}

const parseHolder = (content: string): LockHolder | undefined => {
  const lines = content.split("\n")
  if (lines.length < 4) return undefined
  const pid = Number(lines[0])
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  return { pid, startTime: lines[1] === "" ? undefined : lines[1] }
}

const isAlive = (holder: LockHolder, lockFile: string): boolean =>
  holder.pid === process.pid ? heldHere.has(lockFile) : otherHolderRunning(holder)

/** Age from the file's mtime: the wall clock against the filesystem's, never a test's clock. */
const ageMs = (file: string): number => {
  try {
    return wallClockMs() - Fs.statSync(file).mtimeMs
  } catch {
    return 0
  }
}
