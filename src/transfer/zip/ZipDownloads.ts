/**
 * The ZIP path of the transfer step: the thresholds and what only the disk knows for the
 * decision of which downloads go as archives (engine/zipGroups.ts, pure), and each ZIP job
 * (`run`, zipJob.ts). Files an archive does not bring come back for the per-file path.
 *
 * Invariants:
 * - A file with partial data of the per-file path stays on it (that data resumes there).
 * - A job starts only when the disk keeps `min_free_space` free after all of its files;
 *   otherwise they take the per-file path, which waits for room or stops as it does.
 * - Members are written under `.dlsync/partial/.zip` only, emptied when a step plans (no
 *   member's partial is ever resumed: a restart asks for a new archive of what is missing).
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Context, Effect, Layer } from "effect"
import type { ApiClient } from "../../api/ApiClient.ts"
import type { DownloadAction } from "../../sync/executor.ts"
import type { ProgressTracker } from "../ProgressTracker.ts"
import { partialPathFor } from "../TransferEngine.ts"
import { TransferFs } from "../TransferFs.ts"
import type { TransferOptions } from "../TransferOptions.ts"
import type { Landing } from "./landingBatch.ts"
import { makeZipAgents } from "./zipBody.ts"
import { runZipJob, ZIP_PARTIAL_DIR, type ZipJobResult } from "./zipJob.ts"

/** The most files one archive is asked for (the emulator's limit on POST /files/zip; the spec names none). */
export const ZIP_MAX_IDS = 100

/** A landing batch is made durable at this many files or bytes (or after `durabilityMs`). */
export const BATCH_FILES = 64
export const BATCH_BYTES = 32 * 1024 * 1024

export interface ZipSettings {
  /** planZipJobs' thresholds (engine/zipGroups.ts); `minFiles` 0: no archives. */
  readonly minFiles: number
  readonly medianBelow: number
  readonly maxMemberSize: number
  readonly maxIds: number
  /** ZIP jobs under way at once (as many as the per-file path's transfers). */
  readonly jobsAtOnce: number
}

export class ZipDownloads extends Context.Service<
  ZipDownloads,
  {
    readonly thresholds: ZipSettings
    /** Ids whose per-file partial data exists under `root` (they stay on the per-file path); empties the members' folder. */
    readonly prepare: (root: string, downloads: ReadonlyArray<DownloadAction>) => Effect.Effect<ReadonlySet<string>>
    /** Fetches one job's files as archives, landing each through `record`; returns those left for the per-file path. */
    readonly run: (
      root: string,
      job: ReadonlyArray<DownloadAction>,
      record: (landings: ReadonlyArray<Landing>) => Effect.Effect<void>
    ) => Effect.Effect<ZipJobResult>
  }
>()("dlsync/transfer/zip/ZipDownloads") {
  /** No archives: every download takes the per-file path. */
  static readonly disabled: Layer.Layer<ZipDownloads> = Layer.succeed(
    ZipDownloads,
    ZipDownloads.of({
      thresholds: { minFiles: 0, medianBelow: 0, maxMemberSize: 0, maxIds: 0, jobsAtOnce: 1 },
      prepare: () => Effect.succeed(new Set()),
      run: (_root, job) => Effect.succeed({ perFile: job.map((action) => ({ action, reason: "archives are off" })) })
    })
  )

  static readonly layer = (
    options: TransferOptions
  ): Layer.Layer<ZipDownloads, never, ApiClient | TransferFs | ProgressTracker> =>
    Layer.effect(
      ZipDownloads,
      Effect.gen(function* () {
        const fs = yield* TransferFs
        const context = yield* Effect.context<ApiClient | TransferFs | ProgressTracker>()
        const agents = yield* Effect.acquireRelease(Effect.sync(makeZipAgents), (a) =>
          Effect.sync(() => {
            a.http.destroy()
            a.https.destroy()
          })
        )
        const prepare = (root: string, downloads: ReadonlyArray<DownloadAction>) =>
          Effect.promise(async () => {
            await Fs.promises
              .rm(NodePath.join(root, ZIP_PARTIAL_DIR), { recursive: true, force: true })
              .catch(() => undefined)
            const kept = new Set<string>()
            for (const action of downloads) {
              const size = await fs.size(NodePath.join(root, partialPathFor(action.item.id))).catch(() => undefined)
              if (size !== undefined) kept.add(action.item.id)
            }
            return kept
          })
        const run = (
          root: string,
          job: ReadonlyArray<DownloadAction>,
          record: (landings: ReadonlyArray<Landing>) => Effect.Effect<void>
        ) =>
          Effect.gen(function* () {
            const needed = job.reduce((sum, a) => sum + a.item.size, 0)
            const free = yield* Effect.promise(() => fs.freeBytes(root).catch(() => 0))
            if (free - needed < options.min_free_space) {
              return { perFile: job.map((action) => ({ action, reason: "not enough free space for an archive" })) }
            }
            return yield* runZipJob(
              agents,
              {
                root,
                userAgent: options.userAgent,
                maxRedirects: options.maxRedirects,
                idleTimeoutMs: options.idleTimeoutMs,
                batchFiles: BATCH_FILES,
                batchBytes: BATCH_BYTES,
                batchMs: options.durabilityMs
              },
              job,
              record
            )
          }).pipe(Effect.provide(context))
        return ZipDownloads.of({
          thresholds: {
            minFiles: options.zip_min_files,
            medianBelow: options.zip_median_below,
            maxMemberSize: options.segment_threshold,
            maxIds: ZIP_MAX_IDS,
            jobsAtOnce: Math.max(1, options.concurrency)
          },
          prepare,
          run
        })
      })
    )
}
