/**
 * The transfer step of a pass: carries out the downloads the local pass returned, each
 * through the transfer engine or, for many small files of one folder, as ZIP archives, and
 * hands each outcome to the record step at once.
 *
 *   downloads ─► landed before a crash? ─► recordDownload
 *            └► planZipJobs (zipGroups.ts) ─► ZIP jobs (transfer/zip): each landing batch ─►
 *            │     recordDownload of the batch, in one store commit
 *            │                   └─ files an archive did not bring ─┐
 *            └► per-file (one fiber each) ◄─────────────────────────┘
 *                 TransferQueue.submit ─► engine fetches, verifies, lands in place
 *                 (localOps `land`) ─► Landed | Failed ─► recordDownload
 *
 * Each file's app state follows it (FileProgress, never waited on): queued when the batch
 * starts, downloading with its bytes (sampled every PROGRESS_SAMPLE_MS; the writer
 * coalesces), then complete or failed with the reason (recordDownload).
 *
 * Invariants:
 * - A file reaches its mirror path only through the checked landing rename (fs/landFile.ts)
 *   of the transfer engine or of a ZIP job's batch, which never replaces anything but what
 *   the plan expected (`action.replace`).
 * - A file landed before a crash but not yet recorded (the entry still pending with nothing
 *   written, the file at its path with the remote size and mtime) is recognised by
 *   `looksLanded` and recorded without downloading it again.
 * - Every download ends in exactly one Landed or Failed before `download` returns, except a
 *   file the service's rate limit holds longer than the engine waits (run --once): it is
 *   neither, and once every other file has its outcome the step fails with that rate limit
 *   (exit 75); the next run takes the file up again, from its partial data.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Clock, Context, Duration, Effect, Layer, Semaphore } from "effect"
import { ApiError, RateLimited } from "../api/ApiError.ts"
import { FileProgress } from "../appstate/FileProgress.ts"
import { looksLanded } from "../domain/LocalEntry.ts"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import type { Database } from "../store/Database.ts"
import { inOneCommit } from "../store/oneCommit.ts"
import { Store } from "../store/Store.ts"
import type { DownloadAction } from "../sync/executor.ts"
import { LocalOps } from "../sync/localOps.ts"
import type { NotEnoughSpace } from "../transfer/NotEnoughSpace.ts"
import { ProgressTracker } from "../transfer/ProgressTracker.ts"
import { rateLimitedUntilText } from "../transfer/progressFormat.ts"
import { TransferQueue } from "../transfer/TransferQueue.ts"
import type { Landing } from "../transfer/zip/landingBatch.ts"
import { ZipDownloads } from "../transfer/zip/ZipDownloads.ts"
import { type DownloadOutcome, recordDownload } from "./recordDownload.ts"
import { planZipJobs } from "./zipGroups.ts"

export interface DownloadReport {
  readonly landed: number
  readonly bytes: number
  readonly failed: ReadonlyArray<{ readonly path: string; readonly remoteId: string; readonly reason: string }>
}

/** How many downloads wait on the transfer queue at once (the queue bounds the transfers). */
export const DOWNLOAD_FIBERS = 64

/** The API operation download links come from (named in the rate-limit failure and metrics). */
export const DOWNLOAD_LINK_OPERATION = "POST /files/{file}/download-link"

/**
 * Where earlier versions staged finished files (a second rename put them in place), with
 * their partial data below it. Nothing goes there any more: removed when the step starts.
 */
export const LEGACY_STAGING_DIR = ".dlsync/partial/landing"

/** How often the bytes of running downloads are sampled for app state. */
export const PROGRESS_SAMPLE_MS = 1_000

/** A download the service's rate limit holds beyond what the engine waits: no outcome yet. */
interface HeldByRateLimit {
  readonly _tag: "RateLimited"
  readonly until: number
}

export class TransferDownloads extends Context.Service<
  TransferDownloads,
  {
    /**
     * Downloads and records each of `downloads`; resolves when each has its outcome. Fails
     * with RateLimited when the service's rate limit held files longer than the engine waits, and with NotEnoughSpace, stopping the other downloads, when the queue does not wait
     * for room.
     */
    readonly download: (
      downloads: ReadonlyArray<DownloadAction>
    ) => Effect.Effect<DownloadReport, ApiError | NotEnoughSpace>
  }
>()("dlsync/engine/TransferDownloads") {
  static readonly layer: Layer.Layer<
    TransferDownloads,
    never,
    TransferQueue | LocalOps | Store | ProgressTracker | FileProgress | MirrorEvents | ZipDownloads | Database
  > = Layer.effect(
    TransferDownloads,
    Effect.gen(function* () {
      const queue = yield* TransferQueue
      const ops = yield* LocalOps
      const store = yield* Store
      const tracker = yield* ProgressTracker
      const progress = yield* FileProgress
      const zip = yield* ZipDownloads
      const context = yield* Effect.context<Store | FileProgress | MirrorEvents | Database>()
      yield* Effect.ignore(
        Effect.try(() => Fs.rmSync(NodePath.join(ops.root, LEGACY_STAGING_DIR), { recursive: true, force: true }))
      )

      /** Reports the bytes of this batch's running downloads, until interrupted. */
      const sample = (byId: ReadonlyMap<string, DownloadAction>) =>
        Effect.forever(
          Effect.gen(function* () {
            yield* Effect.sleep(Duration.millis(PROGRESS_SAMPLE_MS))
            for (const file of tracker.snapshot(yield* Clock.currentTimeMillis).files) {
              const action = byId.get(file.fileId)
              if (action === undefined) continue
              yield* progress.report(action.item.id, {
                state: "downloading",
                bytes: file.done,
                size: file.size,
                path: action.path
              })
            }
          })
        )

      /**
       * A file landed before a crash: the entry still pending with nothing written, the
       * verified file at its path with the remote size and the mtime dlsync sets.
       */
      const landedBeforeCrash = Effect.fnUntraced(function* (action: DownloadAction) {
        const { item, path, replace } = action
        if (replace !== null) return undefined
        const there = yield* Effect.orElseSucceed(ops.lstat(path), () => undefined)
        const entry = yield* store.local.byRemoteId(item.id)
        if (
          there !== undefined &&
          entry._tag === "Some" &&
          entry.value.path === path &&
          entry.value.written === null &&
          looksLanded(there, item)
        ) {
          const written = { size: there.size, mtimeNs: there.mtimeNs, ino: there.ino }
          return { _tag: "Landed", action, written } satisfies DownloadOutcome
        }
        return undefined
      })

      /** Fetches one file through the transfer engine: its outcome, or the rate limit that holds it. */
      const transfer = Effect.fnUntraced(function* (
        action: DownloadAction
      ): Effect.fn.Return<DownloadOutcome | HeldByRateLimit, NotEnoughSpace> {
        const { item, path, replace } = action
        const result = yield* queue.submit({
          fileId: item.id,
          size: item.size,
          remoteMtime: new Date(item.updatedAt),
          root: ops.root,
          path,
          replace
        })
        switch (result._tag) {
          case "Completed": {
            const { size, mtimeNs, ino } = result.written
            return { _tag: "Landed", action, written: { size, mtimeNs, ino } }
          }
          case "Parked":
            return { _tag: "Failed", action, reason: result.reason }
          case "RateLimited":
            return { _tag: "RateLimited", until: result.until }
        }
      })

      // One record step at a time: whether a file completes its service download is read
      // right after it is recorded, and two files must not both see themselves as the last.
      const recording = yield* Semaphore.make(1)
      const one = (action: DownloadAction) =>
        Effect.tap(transfer(action), (outcome) =>
          outcome._tag === "RateLimited"
            ? Effect.void
            : recordDownload(outcome, ops.root).pipe(Effect.provide(context), Semaphore.withPermit(recording))
        )

      /** Records outcomes together: one store commit for all of them (store/oneCommit.ts). */
      const recordAll = (outcomes: ReadonlyArray<DownloadOutcome>) =>
        outcomes.length === 0
          ? Effect.void
          : inOneCommit(Effect.forEach(outcomes, (o) => recordDownload(o, ops.root), { discard: true })).pipe(
              Effect.provide(context),
              Semaphore.withPermit(recording)
            )

      /** One ZIP job, then the per-file path for the files its archives did not bring. */
      const zipJob = Effect.fnUntraced(function* (job: ReadonlyArray<DownloadAction>) {
        const landed: Array<DownloadOutcome> = []
        const record = (landings: ReadonlyArray<Landing>) => {
          const outcomes = landings.map(
            (l): DownloadOutcome =>
              l._tag === "Landed"
                ? { _tag: "Landed", action: l.action, written: l.written }
                : { _tag: "Failed", action: l.action, reason: l.reason }
          )
          landed.push(...outcomes)
          return recordAll(outcomes)
        }
        const { perFile } = yield* zip.run(ops.root, job, record)
        if (perFile.length > 0) {
          yield* Effect.logInfo("files of a ZIP archive taken one by one").pipe(
            Effect.annotateLogs({
              files: perFile.length,
              of: job.length,
              reason: perFile[0]?.reason,
              path: perFile[0]?.action.path
            })
          )
        }
        const single = yield* Effect.forEach(perFile, ({ action }) => one(action), { concurrency: DOWNLOAD_FIBERS })
        return [...landed, ...single]
      })

      const download = Effect.fn("TransferDownloads.download")(function* (downloads: ReadonlyArray<DownloadAction>) {
        if (downloads.length === 0) return { landed: 0, bytes: 0, failed: [] } satisfies DownloadReport
        // The app state's outbox is in the store: one commit for all the queued reports.
        yield* inOneCommit(
          Effect.forEach(
            downloads,
            (action) =>
              progress.report(action.item.id, {
                state: "queued",
                bytes: 0,
                size: action.item.size,
                path: action.path
              }),
            { discard: true }
          )
        ).pipe(Effect.provide(context))
        const before: Array<DownloadOutcome> = []
        const rest: Array<DownloadAction> = []
        for (const action of downloads) {
          const landed = yield* landedBeforeCrash(action)
          if (landed === undefined) rest.push(action)
          else before.push(landed)
        }
        yield* recordAll(before)
        const plan = planZipJobs(rest, zip.thresholds, yield* zip.prepare(ops.root, rest))
        const byId = new Map(downloads.map((a) => [a.item.id, a]))
        const outcomes = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Effect.forkScoped(sample(byId))
            const [zipped, single] = yield* Effect.all(
              [
                Effect.forEach(plan.zips, zipJob, { concurrency: zip.thresholds.jobsAtOnce }),
                Effect.forEach(plan.perFile, one, { concurrency: DOWNLOAD_FIBERS })
              ],
              { concurrency: 2 }
            )
            return [...before, ...zipped.flat(), ...single]
          })
        )
        const limitedUntil = outcomes.flatMap((o) => (o._tag === "RateLimited" ? [o.until] : []))
        if (limitedUntil.length > 0) {
          const until = Math.max(...limitedUntil)
          return yield* new ApiError({
            operation: DOWNLOAD_LINK_OPERATION,
            reason: new RateLimited({
              status: 429,
              message: `the service's rate limit holds download links until ${rateLimitedUntilText(until)}, longer than one run --once waits; ${limitedUntil.length} file(s) left for the next run (partial data kept)`,
              retryAfterMillis: Math.max(0, until - (yield* Clock.currentTimeMillis))
            })
          })
        }
        const failed: Array<DownloadReport["failed"][number]> = []
        let landed = 0
        let bytes = 0
        for (const o of outcomes) {
          if (o._tag === "Landed") {
            landed++
            bytes += o.action.item.size
          } else if (o._tag === "Failed") {
            failed.push({ path: o.action.path, remoteId: o.action.item.id, reason: o.reason })
          }
        }
        const report: DownloadReport = { landed, bytes, failed }
        return report
      })

      return TransferDownloads.of({ download })
    })
  )
}
