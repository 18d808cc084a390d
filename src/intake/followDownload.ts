/**
 * Following an accepted download on the service, for what the feed cannot tell: its status,
 * progress, size and rate while the service works on it. Once the service says completed,
 * the following ends: its files are the feed's to report (as remote items carrying the
 * download's id), and the runner asks for a poll so that they come at once.
 *
 *   sent ─► GET /downloads/{id} ─► queued … finalizing: status, progress (never lowered), rate
 *                                ├► completed: serviceCompletedAt, a poll requested
 *                                ├► failed, canceled, expired: the intake fails, with the reason
 *                                ├► blocked: shown failed, still followed (it may be released)
 *                                └► 404: failed (deleted on the service)
 */
import { Effect } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { DownloadId } from "../api/schemas/common.ts"
import type { Download } from "../api/schemas/downloads.ts"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import type { IntakeRecord, IntakeTables } from "../store/intakeTables.ts"
import { failRelease } from "./releaseCompletion.ts"

export interface FollowContext {
  readonly api: ApiClient["Service"]
  readonly tables: IntakeTables["Service"]
  readonly events: MirrorEvents["Service"]
  readonly now: number
}

/** What one look found: still under way, completed there (its files are the feed's now), or failed. */
export type FollowOutcome = "under way" | "completed" | "failed"

/** Statuses after which the service will not complete the download. */
const FAILED_STATUSES: ReadonlySet<string> = new Set(["failed", "canceled", "cancelled", "expired", "error"])

export const followDownload = Effect.fn("Intake.follow")(function* (ctx: FollowContext, record: IntakeRecord) {
  if (record.downloadId === null) return "under way" as FollowOutcome
  const answer = yield* Effect.result(ctx.api.downloads.get(DownloadId.make(record.downloadId)))
  if (answer._tag === "Failure") {
    if (answer.failure.reason._tag !== "NotFound") return yield* answer.failure
    yield* failRelease(ctx, record, "the download is no longer on the service (deleted there)")
    return "failed" as FollowOutcome
  }
  const download = answer.success
  const status = download.status ?? "queued"
  if (FAILED_STATUSES.has(status)) {
    yield* ctx.tables.update(record.id, ["sent"], { status }, ctx.now)
    yield* failRelease(ctx, record, `${status} on the service: ${errorText(download) ?? "no reason given"}`)
    return "failed" as FollowOutcome
  }
  const size = numberField(download, "size_bytes") ?? record.size
  const completed = status === "completed"
  const progress = Math.max(record.progress, completed ? 1 : clamp(numberField(download, "progress") ?? 0))
  const elapsed = (ctx.now - record.updatedAt) / 1000
  // The rate since the last look (every update of the record is a look, or the send).
  const serviceRate = completed || elapsed <= 0 ? 0 : ((progress - record.progress) * size) / elapsed
  const reason =
    status === "blocked" ? `blocked by the service: ${errorText(download) ?? "the account needs attention"}` : null
  yield* ctx.tables.update(
    record.id,
    ["sent"],
    { status, size, progress, serviceRate, reason, ...(completed ? { serviceCompletedAt: ctx.now } : {}) },
    ctx.now
  )
  if (!completed) return "under way" as FollowOutcome
  yield* Effect.logInfo(`intake: ${record.name} (${record.id}) completed on the service; mirroring its files`)
  return "completed" as FollowOutcome
})

// ---------------------------------------------------------------------------------------

const numberField = (download: Download, key: string): number | undefined => {
  const value = download[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const errorText = (download: Download): string | undefined => {
  const error = download.error
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return undefined
}

const clamp = (n: number): number => Math.min(1, Math.max(0, n))
