/**
 * The transfer engine: brings one remote file to its final path, resumably and verified.
 *
 *   journal.load ─► free space? ─► attempt (transferAttempt.ts) ──────────► finalize
 *                       │            │ link (cached until near expiry)       size check
 *                       │            │ N segment workers ─► leanGet ───────► fd  futimes, fsync
 *                       │            │      (TCP or TLS, reused buffers)     land (fs/landFile: checked
 *                       │            │   └ work stealing: split the largest  rename, fsync(dir))
 *                       │            │   └ N adapts to the rate (decideConnections.ts), each
 *                       │            │     worker holding a permit of the host's budget
 *                       │            │                                       journal.remove
 *                       │            │ committer: fdatasync ─► journal.save, beside the
 *                       │            │   writers (per batch, then halving in the last one)
 *                       │            ▼
 *                       │         fault ─► retryDecision.ts (pure) ─► this file interprets it:
 *                       │                  link: fresh link · restart: from zero
 *                       │                  transient: backoff · no-space: pause · fatal: park
 *                       │                  rate-limited: wait until the service's time,
 *                       │                  no attempt counted (beyond maxRateLimitWaitMs:
 *                       ▼                  RateLimited, for run --once)
 *                 PausedForSpace
 *
 * Invariants:
 * - Bytes live only in `<root>/.dlsync/partial/<id>` until the file is complete; the final
 *   path is only ever touched by one checked rename of a verified, fsynced file (fs/landFile
 *   `land`: inside the root, real folders, never over anything but what the request
 *   expects there), followed by an fsync of its folder.
 * - A journal record's durable bytes were fdatasynced before the record was saved, and at
 *   most two durability batches are ever written but not durable (writes wait otherwise).
 *   The flushes overlap the download, the last batch's too (commitPolicy.ts): the finalize's
 *   fsync finds little left to write.
 *   What was written beyond that survives a killed process, not a reboot: the written mark
 *   (writtenMark.ts) lets a restart in the same boot continue from it.
 * - Bytes of two versions are never combined: every response is checked against the
 *   validators (ETag, else Last-Modified) the file's bytes came from, and any doubt
 *   restarts from zero.
 * - The CDN gets no credential: requests carry only Host, Range, If-Range, Accept-Encoding
 *   and User-Agent, on connections of their own, and redirects are followed here.
 * - A file smaller than its segment threshold streams as one request.
 * - When the engine's fiber is interrupted, every request is aborted and every write has
 *   ended before the descriptor is closed.
 */
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { Clock, Context, Duration, Effect, Layer, Random } from "effect"
import type { LocalStat } from "../domain/LocalEntry.ts"
import { resolveInRoot } from "../fs/containment.ts"
import { DLSYNC_DIR } from "../fs/dlsyncDir.ts"
import { LocalOpError } from "../fs/LocalOpError.ts"
import { Bandwidth } from "./Bandwidth.ts"
import { ConnectionBudget } from "./connectionBudget.ts"
import { freeSpace } from "./freeSpace.ts"
import { LeanPool } from "./leanPool.ts"
import { type FileProgress, ProgressTracker } from "./ProgressTracker.ts"
import { rateLimitedUntilText } from "./progressFormat.ts"
import { loadState, resetToZero, saveRecord } from "./resumeRecords.ts"
import { decideRetry, NO_RETRIES, type RetryDecision } from "./retryDecision.ts"
import { writtenBytes } from "./segments.ts"
import type { TransferFault } from "./TransferFault.ts"
import { TransferFs } from "./TransferFs.ts"
import { TransferJournal } from "./TransferJournal.ts"
import { TransferLinks } from "./TransferLinks.ts"
import type { TransferOptions } from "./TransferOptions.ts"
import { attempt, partialFile } from "./transferAttempt.ts"
import type { TransferRequest, TransferResult } from "./transferRequest.ts"
import { type Deps, io } from "./transferState.ts"
import { markPathFor } from "./writtenMark.ts"

export type { TransferRequest, TransferResult } from "./transferRequest.ts"

export class TransferEngine extends Context.Service<
  TransferEngine,
  {
    /** Never fails: every outcome is a `TransferResult`; only interruption stops it otherwise. */
    readonly download: (request: TransferRequest) => Effect.Effect<TransferResult>
  }
>()("dlsync/transfer/TransferEngine") {
  static readonly layer = (options: TransferOptions) =>
    Layer.effect(
      TransferEngine,
      Effect.gen(function* () {
        const fs = yield* TransferFs
        const deps: Deps = {
          options,
          journal: yield* TransferJournal,
          fs,
          links: yield* TransferLinks,
          limiter: yield* Bandwidth,
          progress: yield* ProgressTracker,
          lean: yield* Effect.acquireRelease(
            Effect.sync(() => new LeanPool(options.bufferSize)),
            (pool) => Effect.sync(() => pool.close())
          ),
          connections: new ConnectionBudget(options.max_connections),
          linkCache: new Map(),
          knownDirs: new Set(),
          freeCache: new Map()
        }
        return TransferEngine.of({ download: (request) => download(deps, request) })
      })
    )
}

/** The partial file's path relative to the root: ids that are safe names are kept, others hashed. */
export const partialPathFor = (fileId: string): string =>
  NodePath.join(
    ".dlsync",
    "partial",
    SAFE_NAME.test(fileId) && !RESERVED_NAMES.has(fileId) ? fileId : `x-${hexOf(fileId)}`
  )

// ---------------------------------------------------------------------------------------

const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/
/** Names taken in the partial folder by others (the staging folder of earlier versions, until removed). */
const RESERVED_NAMES = new Set(["landing"])

// The interpreter of the retry decisions (retryDecision.ts); an attempt is
// transferAttempt.ts, and the rest of a transfer is in its own files: resumeRecords.ts
// (journal and mark at the start), freeSpace.ts.
const download = (deps: Deps, request: TransferRequest): Effect.Effect<TransferResult> => {
  let active: FileProgress | undefined
  return Effect.gen(function* () {
    const { options, progress } = deps
    const name = request.name ?? request.path
    const inside = yield* Effect.result(Effect.try(() => resolveInRoot(request.root, request.path)))
    if (inside._tag === "Failure" || request.path.split("/")[0] === DLSYNC_DIR) {
      return parked(request.fileId, `final path ${request.path} is not inside the mirror root`, 0)
    }
    const partialRel = partialPathFor(request.fileId)
    const partialAbs = NodePath.join(request.root, partialRel)
    const file = partialFile(request, partialRel, partialAbs)
    const state = yield* loadState(deps, file)
    const fp = progress.start(
      request.fileId,
      name,
      request.size,
      writtenBytes(state.segments ?? []),
      yield* Clock.currentTimeMillis
    )
    active = fp
    progress.emit({ _tag: "Started", fileId: request.fileId, name, size: request.size, resumedAt: fp.done })

    const park = Effect.fnUntraced(function* (reason: string) {
      state.lastError = reason
      yield* saveRecord(deps, file, state)
      progress.emit({ _tag: "Parked", fileId: request.fileId, name, reason })
      progress.end(fp, "parked")
      return parked(request.fileId, reason, state.attempts)
    })
    const pause = (reason: string) => {
      progress.emit({ _tag: "Paused", fileId: request.fileId, name, reason })
      progress.end(fp, "paused")
    }

    /** The room this file still needs: a result when there is not enough (or no answer). */
    const shortOfSpace = Effect.fnUntraced(function* () {
      const stillNeeded = request.size - writtenBytes(state.segments ?? [])
      let free = yield* Effect.result(freeSpace(deps, request.root, false))
      if (free._tag === "Success" && free.success - stillNeeded < options.min_free_space) {
        free = yield* Effect.result(freeSpace(deps, request.root, true))
      }
      if (free._tag === "Failure") return yield* park(free.failure.message)
      if (free.success - stillNeeded >= options.min_free_space) return undefined
      pause("not enough free space")
      return pausedForSpace(request.fileId, free.success, stillNeeded + options.min_free_space)
    })

    /** The result of an attempt that ran to its end: landed, or refused by the landing. */
    const landedResult = Effect.fnUntraced(function* (landed: LocalStat | LocalOpError) {
      if (landed instanceof LocalOpError) {
        // The verified file may not go where it was meant to (something appeared there, a
        // folder became a symlink…): dropped, as the next pass plans that path afresh.
        progress.emit({ _tag: "Parked", fileId: request.fileId, name, reason: landed.message })
        progress.end(fp, "parked")
        return parked(request.fileId, landed.message, state.attempts + 1)
      }
      progress.emit({
        _tag: "Finished",
        fileId: request.fileId,
        name,
        size: request.size,
        fetched: fp.fetched,
        elapsedMs: (yield* Clock.currentTimeMillis) - fp.startedAt
      })
      progress.end(fp, "completed")
      return {
        _tag: "Completed",
        fileId: request.fileId,
        path: request.path,
        written: landed,
        fetched: fp.fetched,
        attempts: state.attempts + 1
      } satisfies TransferResult
    })

    /** Carries out a decision after `fault`: a result when the call ends here, else undefined (try again). */
    const carryOut = Effect.fnUntraced(function* (decision: RetryDecision, fault: TransferFault) {
      switch (decision._tag) {
        case "WaitForRateLimit": {
          // The account's rate limit, not this file's fault: waited out, never an attempt.
          const until = (yield* Clock.currentTimeMillis) + decision.delayMs
          yield* Effect.logDebug("transfer waits for the service's rate limit").pipe(
            Effect.annotateLogs({ fileId: request.fileId, waitMillis: decision.delayMs })
          )
          progress.emit({ _tag: "RateLimited", fileId: request.fileId, name, until, delayMs: decision.delayMs })
          fp.rateLimitedUntil = until
          yield* Effect.sleep(Duration.millis(decision.delayMs))
          fp.rateLimitedUntil = null
          return undefined
        }
        case "RateLimited": {
          const until = (yield* Clock.currentTimeMillis) + decision.delayMs
          const reason = `the service's rate limit holds download links until ${rateLimitedUntilText(until)}`
          pause(reason)
          return { _tag: "RateLimited", fileId: request.fileId, until, reason } satisfies TransferResult
        }
        case "Park":
          return yield* park(decision.reason)
        case "PauseForSpace": {
          yield* saveRecord(deps, file, state)
          pause(fault.message)
          const free = yield* Effect.orElseSucceed(
            io("statfs", () => deps.fs.freeBytes(request.root)),
            () => 0
          )
          const needed = request.size - writtenBytes(state.segments ?? []) + options.min_free_space
          return pausedForSpace(request.fileId, free, needed)
        }
        case "FreshLink":
          deps.linkCache.delete(request.fileId)
          return undefined
        case "Restart":
          // The mark describes bytes of the old version: gone before anything new is written.
          yield* Effect.ignore(io("unlink", () => deps.fs.unlink(markPathFor(partialAbs))))
          resetToZero(state, decision.noRanges)
          fp.done = 0
          yield* saveRecord(deps, file, state)
          return undefined
        case "Backoff":
          progress.emit({
            _tag: "Retrying",
            fileId: request.fileId,
            name,
            attempt: state.attempts,
            delayMs: decision.delayMs,
            reason: fault.message
          })
          yield* saveRecord(deps, file, state)
          yield* Effect.sleep(decision.delayMs)
          return undefined
      }
    })

    let counts = NO_RETRIES
    while (true) {
      const short = yield* shortOfSpace()
      if (short !== undefined) return short
      const outcome = yield* Effect.result(attempt(deps, request, partialAbs, partialRel, state, fp))
      if (outcome._tag === "Success") return yield* landedResult(outcome.success)
      const fault = outcome.failure
      const step = decideRetry({ failed: fault, counts, limits: options, random: yield* Random.next })
      counts = step.counts
      if (step.attempt) {
        state.attempts++
        state.lastError = fault.message
        yield* Effect.logDebug("transfer attempt failed").pipe(
          Effect.annotateLogs({ fileId: request.fileId, kind: fault.kind, reason: fault.message })
        )
      }
      const result = yield* carryOut(step.decision, fault)
      if (result !== undefined) return result
    }
  }).pipe(
    Effect.onInterrupt(() => Effect.sync(() => active !== undefined && deps.progress.end(active, "paused"))),
    Effect.annotateLogs({ fileId: request.fileId }),
    Effect.withSpan("TransferEngine.download", { attributes: { fileId: request.fileId, size: request.size } })
  )
}

const parked = (fileId: string, reason: string, attempts: number): TransferResult => ({
  _tag: "Parked",
  fileId,
  reason,
  attempts
})

const pausedForSpace = (fileId: string, free: number, needed: number): TransferResult => ({
  _tag: "PausedForSpace",
  fileId,
  free,
  needed
})

const hexOf = (text: string): string => createHash("sha256").update(text).digest("hex")
