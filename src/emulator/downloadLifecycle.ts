/**
 * How downloads move through their states, by the emulator's clock or by the control API:
 *
 *   queued ─► processing ─► downloading ─► finalizing ─► completed (files added, file_id set;
 *     ▲           │              │              │          torrents then show activity "seeding")
 *     │           └──────────────┴──────────────┴──► failed
 *     │        cancel from queued, blocked or an active state ──► canceled
 *     └──── retry (same id, attempt + 1) from failed or canceled
 *   queued or active ─► blocked (control API: needs account attention) ─► queued (unblock)
 *
 * Invariants:
 * - A download leaves `queued` only while the user has fewer active downloads than
 *   `concurrent_downloads` and, for torrents, fewer active torrents than
 *   `concurrent_torrents` (a null cap is no cap); the oldest queued download goes first.
 * - Each terminal transition (completed, failed, canceled) of an attempt emits one webhook
 *   event with a fresh event id, when the download has a `webhook_url`.
 * - A timer (unref'd) runs `tick` when the next transition is due; `dispose` stops it.
 */
import { randomBytes } from "node:crypto"
import type { EmulatorClock } from "./clock.ts"
import {
  canCancel,
  type DownloadError,
  type DownloadRecord,
  type DownloadStatus,
  downloadJson,
  isActive
} from "./downloadRecord.ts"
import type { PlannedFile } from "./downloadsSources.ts"
import type { WebhookEventType, WebhookSender } from "./webhooks.ts"

/** What downloads need from the rest of the emulator (EmulatorState provides it). */
export interface DownloadHost {
  /** The user's effective caps, or undefined when the user does not exist. */
  readonly limits: (userId: string) =>
    | {
        readonly concurrent_downloads: number | null
        readonly concurrent_torrents: number | null
        readonly max_file_size_bytes: number | null
      }
    | undefined
  /** Counts one new download against `daily_downloads`; false (nothing counted) when none remain today. */
  readonly takeDailyDownload: (userId: string) => boolean
  /** Takes `amount` credits; false (and nothing taken) when the user has fewer. */
  readonly spendCredit: (userId: string, amount: number) => boolean
  /**
   * Adds a completed download's files under `directory` (inside a new or existing folder
   * `folder` when not null) and returns the id of the resulting file or folder.
   */
  readonly addFiles: (
    userId: string,
    input: {
      readonly directory: string
      readonly folder: string | null
      readonly downloadId: string
      readonly files: ReadonlyArray<PlannedFile>
    }
  ) => string
}

/** How long each active state lasts when time drives the lifecycle. */
export interface DownloadTimings {
  readonly processingMs: number
  readonly downloadingMs: number
  readonly finalizingMs: number
}

export const DEFAULT_TIMINGS: DownloadTimings = { processingMs: 1000, downloadingMs: 4000, finalizingMs: 1000 }
export class DownloadLifecycle {
  timings: DownloadTimings
  readonly #clock: EmulatorClock
  readonly #host: DownloadHost
  readonly #webhooks: WebhookSender
  readonly #records = new Map<string, DownloadRecord>()
  #timer: ReturnType<typeof setTimeout> | undefined
  #disposed = false

  constructor(options: {
    readonly clock: EmulatorClock
    readonly host: DownloadHost
    readonly webhooks: WebhookSender
    readonly timings?: DownloadTimings | undefined
  }) {
    this.#clock = options.clock
    this.#host = options.host
    this.#webhooks = options.webhooks
    this.timings = options.timings ?? DEFAULT_TIMINGS
  }

  get(id: string): DownloadRecord | undefined {
    return this.#records.get(id)
  }

  /** Every download, oldest first. */
  ordered(): Array<DownloadRecord> {
    return [...this.#records.values()].sort((a, b) => a.seq - b.seq)
  }

  /** Takes a new download (status queued) into the lifecycle. */
  add(record: DownloadRecord): void {
    this.#records.set(record.id, record)
    this.tick()
  }

  /** Forgets a download (an active one stops silently). */
  remove(id: string): void {
    this.#records.delete(id)
    this.tick()
  }

  /** Cancels a download the caller has checked `canCancel` for. */
  cancel(record: DownloadRecord): void {
    this.#finish(record, "canceled", null)
    this.tick()
  }

  /** Queues a failed or canceled download again as its next attempt. */
  retry(record: DownloadRecord): void {
    record.attempt++
    record.status = "queued"
    record.error = null
    record.fileId = null
    record.activity = null
    record.progress = 0
    record.stageStartedAt = this.#clock.nowMs()
    record.updatedAt = this.#clock.tick()
    this.tick()
  }

  /** Applies every transition that is due by the clock, then schedules the next one. */
  tick(): void {
    if (this.#disposed) return
    let changed = true
    while (changed) {
      changed = false
      const now = this.#clock.nowMs()
      for (const record of this.ordered()) {
        const duration = this.#duration(record.status)
        if (duration !== undefined && now >= record.stageStartedAt + duration) {
          this.#step(record, record.stageStartedAt + duration)
          changed = true
        }
      }
      if (this.#startQueued()) changed = true
    }
    for (const record of this.#records.values()) {
      if (record.status === "downloading") {
        record.progress = Math.min(
          1,
          (this.#clock.nowMs() - record.stageStartedAt) / Math.max(1, this.timings.downloadingMs)
        )
      }
    }
    this.#schedule()
  }

  /** Control: moves one download one state forward now. False when it cannot move (terminal, or queued behind a cap). */
  advance(id: string): boolean {
    const record = this.#records.get(id)
    if (record === undefined) return false
    if (record.status === "queued") {
      if (!this.#hasSlot(record)) return false
      this.#begin(record, "processing", this.#clock.nowMs())
    } else if (this.#duration(record.status) === undefined) return false
    else this.#step(record, this.#clock.nowMs())
    this.tick()
    return true
  }

  /** Control: runs a download to its end now (completed unless a rule fails it). */
  complete(id: string): boolean {
    let moved = false
    while (this.advance(id)) moved = true
    return moved
  }

  /** Control: fails an active or queued download with a message. */
  fail(id: string, message: string): boolean {
    const record = this.#records.get(id)
    if (record === undefined || !canCancel(record.status)) return false
    this.#finish(record, "failed", { code: "download_failed", message })
    this.tick()
    return true
  }

  /** Control: holds a queued or active download for account attention (status `blocked`). */
  block(id: string, message: string): boolean {
    const record = this.#records.get(id)
    if (record === undefined || !(record.status === "queued" || isActive(record.status))) return false
    record.status = "blocked"
    record.error = { code: "account_attention_required", message }
    record.updatedAt = this.#clock.tick()
    this.tick()
    return true
  }

  /** Control: releases a blocked download back to the queue. */
  unblock(id: string): boolean {
    const record = this.#records.get(id)
    if (record?.status !== "blocked") return false
    record.error = null
    this.#begin(record, "queued", this.#clock.nowMs())
    this.tick()
    return true
  }

  /** Ids and statuses, for the control API and tests. */
  snapshot(): ReadonlyArray<{ readonly id: string; readonly userId: string; readonly status: DownloadStatus }> {
    return this.ordered().map((r) => ({ id: r.id, userId: r.userId, status: r.status }))
  }

  /** Stops the timer (the emulator's close). */
  dispose(): void {
    this.#disposed = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
  }

  #duration(status: DownloadStatus): number | undefined {
    switch (status) {
      case "processing":
        return this.timings.processingMs
      case "downloading":
        return this.timings.downloadingMs
      case "finalizing":
        return this.timings.finalizingMs
      default:
        return undefined
    }
  }

  /** One step out of an active state, as of `at` (ms). */
  #step(record: DownloadRecord, at: number): void {
    switch (record.status) {
      case "processing": {
        const max = this.#host.limits(record.userId)?.max_file_size_bytes ?? null
        const tooLarge = max !== null && record.files.some((f) => f.sizeBytes > max)
        if (tooLarge) {
          this.#finish(record, "failed", {
            code: "file_too_large",
            message: `A file exceeds the account's ${max}-byte limit`
          })
        } else this.#begin(record, "downloading", at)
        return
      }
      case "downloading":
        if (record.failsWhileDownloading) {
          this.#finish(record, "failed", { code: "source_unavailable", message: "The source stopped responding" })
        } else {
          record.progress = 1
          this.#begin(record, "finalizing", at)
        }
        return
      case "finalizing":
        record.fileId = this.#host.addFiles(record.userId, {
          directory: record.directory,
          folder: record.folder,
          downloadId: record.id,
          files: record.files
        })
        if (record.type === "torrent") record.activity = "seeding"
        this.#finish(record, "completed", null)
        return
      default:
        return
    }
  }

  #begin(record: DownloadRecord, status: DownloadStatus, at: number): void {
    record.status = status
    record.stageStartedAt = at
    record.updatedAt = this.#clock.tick()
  }

  #finish(record: DownloadRecord, status: "completed" | "failed" | "canceled", error: DownloadError | null): void {
    record.status = status
    record.error = error
    record.updatedAt = this.#clock.tick()
    if (record.webhookUrl !== null) {
      const type: WebhookEventType = `download.${status}`
      this.#webhooks.enqueue(record.webhookUrl, record.credential, {
        id: `evt_${randomBytes(12).toString("base64url")}`,
        type,
        data: downloadJson(record)
      })
    }
  }

  #hasSlot(record: DownloadRecord): boolean {
    const limits = this.#host.limits(record.userId)
    let active = 0
    let torrents = 0
    for (const other of this.#records.values()) {
      if (other.userId !== record.userId || !isActive(other.status)) continue
      active++
      if (other.type === "torrent") torrents++
    }
    if (limits?.concurrent_downloads != null && active >= limits.concurrent_downloads) return false
    if (record.type === "torrent" && limits?.concurrent_torrents != null && torrents >= limits.concurrent_torrents) {
      return false
    }
    return true
  }

  #startQueued(): boolean {
    let started = false
    for (const record of this.ordered()) {
      if (record.status === "queued" && this.#hasSlot(record)) {
        this.#begin(record, "processing", this.#clock.nowMs())
        started = true
      }
    }
    return started
  }

  #schedule(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    let next = Number.POSITIVE_INFINITY
    for (const record of this.#records.values()) {
      const duration = this.#duration(record.status)
      if (duration !== undefined) next = Math.min(next, record.stageStartedAt + duration)
    }
    if (next === Number.POSITIVE_INFINITY) return
    this.#timer = setTimeout(() => this.tick(), Math.max(0, next - this.#clock.nowMs()))
    this.#timer.unref()
  }
}
