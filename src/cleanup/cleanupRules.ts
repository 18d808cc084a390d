/**
 * Remote cleanup's rules (pure): which files are in scope, when one is old enough, how the
 * deletions are batched and how long a refused one waits.
 */
import { backoffDelay } from "../pacing/backoff.ts"

/** Most identifiers one POST /files/delete names (the service's limit on `ids`). */
export const DELETE_BATCH = 100

/** The first retry of a refused deletion (resource_locked, an unknown result, a failed request) waits up to this… */
export const RETRY_BASE_MS = 60_000
/** …doubling per attempt up to this. */
export const RETRY_MAX_MS = 6 * 3_600_000

/** Whether a mirror path lies in one of the cleaned-up folders (a folder itself is never cleaned up). */
export const inCleanupFolders = (path: string, folders: ReadonlyArray<string>): boolean =>
  folders.some((folder) => path.startsWith(`${folder}/`))

/** Whether a file verified since `verifiedSince` has been verified for `after` at `now` (all ms). */
export const isOldEnough = (verifiedSince: number, now: number, after: number): boolean => now - verifiedSince >= after

/** `ids` in batches of at most `size`, in order. */
export const batches = <A>(ids: ReadonlyArray<A>, size = DELETE_BATCH): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size))
  return out
}

/** When a deletion refused for the `attempt`-th time (1 for the first) is tried again; `random` in [0, 1). */
export const retryAt = (now: number, attempt: number, random: number): number =>
  now + RETRY_BASE_MS / 2 + backoffDelay(attempt, random, RETRY_BASE_MS, RETRY_MAX_MS)
