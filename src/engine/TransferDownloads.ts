/**
 * The executor's DownloadQueue over the transfer engine: the executor enqueues during a
 * pass, the pass then drains the batch and waits for every file's outcome.
 *
 *   executor ─► enqueue (one per remote id) ─► drain ─► TransferQueue.submit (root, path, replace)
 *                                                         │ verified file landed in place by
 *                                                         │ localOps `land` (one checked rename)
 *                                                         ▼
 *                                              landed(lstat) │ failed(reason)
 *
 * Each file's app state follows it (FileProgress, never waited on): queued at enqueue,
 * downloading with its bytes (sampled every PROGRESS_SAMPLE_MS; the writer coalesces),
 * complete once landed, failed with the reason when the transfer parks or landing fails.
 *
 * Invariants:
 * - A file reaches its mirror path only through the transfer engine's landing, which never
 *   replaces anything but what the plan expected (`action.replace`).
 * - A file landed before a crash but not recorded is recognised (`looksLanded`) and recorded
 *   without a new download.
 * - Every enqueued request ends in exactly one `landed` or `failed` before `drain` returns,
 *   except a file the service's rate limit holds longer than the engine waits (run --once):
 *   it is neither, and once every other file has its outcome the drain fails with that
 *   rate limit (exit 75); the next run takes the file up again, from its partial data.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { ApiError, RateLimited } from "../api/ApiError.ts"
import { FileProgress } from "../appstate/FileProgress.ts"
import { Store } from "../store/Store.ts"
import { DownloadQueue, type DownloadRequest } from "../sync/executor.ts"
import { LocalOps } from "../sync/localOps.ts"
import { looksLanded, type WrittenStat } from "../sync/model.ts"
import { ProgressTracker } from "../transfer/ProgressTracker.ts"
import { rateLimitedUntilText } from "../transfer/progressView.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"

export interface DrainReport {
  readonly landed: number
  readonly bytes: number
  readonly failed: ReadonlyArray<{ readonly path: string; readonly remoteId: string; readonly reason: string }>
}

/** How many downloads wait on the transfer queue at once (the queue bounds the transfers). */
export const DRAIN_FIBERS = 64

/** The API operation download links come from (named in the rate-limit failure and metrics). */
export const DOWNLOAD_LINK_OPERATION = "POST /files/{file}/download-link"

/** How often the bytes of running downloads are sampled for app state. */
export const PROGRESS_SAMPLE_MS = 1_000

export class TransferDownloads extends Context.Service<
  TransferDownloads,
  {
    /**
     * Downloads everything enqueued since the last drain; resolves when each has an outcome.
     * Fails with RateLimited when the service's rate limit held files longer than the engine waits.
     */
    readonly drain: Effect.Effect<DrainReport, ApiError>
  }
>()("dlsync/engine/TransferDownloads") {
  /** Provides both the executor's DownloadQueue and the drain. */
  static readonly layer: Layer.Layer<
    TransferDownloads | DownloadQueue,
    never,
    TransferQueue | LocalOps | Store | ProgressTracker | FileProgress
  > = Layer.effectContext(
    Effect.gen(function* () {
      const queue = yield* TransferQueue
      const ops = yield* LocalOps
      const store = yield* Store
      const tracker = yield* ProgressTracker
      const progress = yield* FileProgress
      const batch = new Map<string, DownloadRequest>()

      const recordFailed = (request: DownloadRequest, reason: string) =>
        Effect.andThen(
          request.failed(reason),
          progress.report(request.action.item.id, {
            state: "failed",
            bytes: 0,
            size: request.action.item.size,
            path: request.action.path,
            error: reason
          })
        )
      const recordLanded = (request: DownloadRequest, stat: WrittenStat) =>
        Effect.andThen(
          request.landed(stat),
          progress.report(request.action.item.id, {
            state: "complete",
            bytes: stat.size,
            size: request.action.item.size,
            path: request.action.path
          })
        )

      /** Reports the bytes of this batch's running downloads, until interrupted. */
      const sample = (requests: ReadonlyMap<string, DownloadRequest>) =>
        Effect.forever(
          Effect.gen(function* () {
            yield* Effect.sleep(Duration.millis(PROGRESS_SAMPLE_MS))
            for (const file of tracker.snapshot(Date.now()).files) {
              const request = requests.get(file.fileId)
              if (request === undefined) continue
              yield* progress.report(file.fileId, {
                state: "downloading",
                bytes: file.done,
                size: file.size,
                path: request.action.path
              })
            }
          })
        )

      const one = Effect.fnUntraced(function* (request: DownloadRequest) {
        const { item, path, replace } = request.action
        if (replace === null) {
          // A crash after a landing, before the store recorded it, leaves the verified file
          // in place with the remote size and the mtime the transfer engine set.
          const there = yield* Effect.orElseSucceed(ops.lstat(path), () => undefined)
          const entry = yield* store.local.byRemoteId(item.id)
          if (
            there !== undefined &&
            entry._tag === "Some" &&
            entry.value.path === path &&
            entry.value.written === null &&
            looksLanded(there, item)
          ) {
            yield* recordLanded(request, { size: there.size, mtimeNs: there.mtimeNs, ino: there.ino })
            return null
          }
        }
        const result = yield* queue.submit({
          fileId: item.id,
          size: item.size,
          remoteMtime: new Date(item.updatedAt),
          root: ops.root,
          path,
          replace
        })
        if (result._tag === "Parked") {
          yield* recordFailed(request, result.reason)
          return { path, remoteId: item.id, reason: result.reason }
        }
        if (result._tag === "RateLimited") return result
        const stat = result.written
        yield* recordLanded(request, { size: stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino })
        return null
      })

      const drain = Effect.gen(function* () {
        const requests = [...batch.values()]
        batch.clear()
        if (requests.length === 0) return { landed: 0, bytes: 0, failed: [] }
        const byId = new Map(requests.map((r) => [r.action.item.id, r]))
        const outcomes = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Effect.forkScoped(sample(byId))
            return yield* Effect.forEach(requests, one, { concurrency: DRAIN_FIBERS })
          })
        )
        const failed: Array<DrainReport["failed"][number]> = []
        const limitedUntil: Array<number> = []
        for (const o of outcomes) {
          if (o === null) continue
          if ("until" in o) limitedUntil.push(o.until)
          else failed.push(o)
        }
        const limited = limitedUntil.length
        if (limited > 0) {
          const until = Math.max(...limitedUntil)
          return yield* new ApiError({
            operation: DOWNLOAD_LINK_OPERATION,
            reason: new RateLimited({
              status: 429,
              message: `the service's rate limit holds download links until ${rateLimitedUntilText(until)}, longer than one run --once waits; ${limited} file(s) left for the next run (partial data kept)`,
              retryAfterMillis: Math.max(0, until - (yield* Clock.currentTimeMillis))
            })
          })
        }
        const landed = requests.length - failed.length
        const bytes = requests.reduce((n, r, i) => (outcomes[i] === null ? n + r.action.item.size : n), 0)
        const report: DrainReport = { landed, bytes, failed }
        return report
      })

      return Context.make(TransferDownloads, TransferDownloads.of({ drain })).pipe(
        Context.add(
          DownloadQueue,
          DownloadQueue.of({
            enqueue: (request) =>
              Effect.andThen(
                Effect.sync(() => void batch.set(request.action.item.id, request)),
                progress.report(request.action.item.id, {
                  state: "queued",
                  bytes: 0,
                  size: request.action.item.size,
                  path: request.action.path
                })
              )
          })
        )
      )
    })
  )
}
