/**
 * Downloads: creation (201 download or 200 selection), listing, cancel, retry, delete, and
 * a lifecycle that advances with the emulator's clock or by the control API.
 *
 *   queued ─► processing ─► downloading ─► finalizing ─► completed (files added, file_id set;
 *     ▲           │              │              │          torrents then show activity "seeding")
 *     │           └──────────────┴──────────────┴──► failed
 *     │        cancel from queued, blocked or an active state ──► canceled
 *     └──── retry (same id, attempt + 1, 1 credit) from failed or canceled
 *   queued or active ─► blocked (control API: needs account attention) ─► queued (unblock)
 *
 * Invariants:
 * - A download leaves `queued` only while the user has fewer active downloads than
 *   `concurrent_downloads` and, for torrents, fewer active torrents than
 *   `concurrent_torrents` (a null cap is no cap); the oldest queued download goes first.
 * - `can_cancel` is true in queued, blocked and the active states; `can_retry` in failed and canceled.
 * - Each terminal transition (completed, failed, canceled) of an attempt emits one webhook
 *   event with a fresh event id, when the download has a `webhook_url`.
 * - Each new download (not a retry) counts against `daily_downloads`; none left is 402.
 * - Other users' downloads and selections are 404.
 */
import { createHmac, randomBytes } from "node:crypto"
import { isJsonObject, readJsonBody } from "./appStorageBody.ts"
import { type EmulatorClock, formatMicros } from "./clock.ts"
import {
  type PlannedFile,
  parseMagnet,
  planSource,
  type Source,
  type SourceType,
  sourceName
} from "./downloadsSources.ts"
import { parseMultipart, uploadedSource } from "./downloadsUpload.ts"
import { apiError, type Principal, type RouteRequest, type RouteResult } from "./http.ts"
import { SelectionStore, selectionJson } from "./selections.ts"
import type { WebhookEventType, WebhookSender } from "./webhooks.ts"

export type DownloadStatus =
  | "queued"
  | "processing"
  | "downloading"
  | "finalizing"
  | "completed"
  | "failed"
  | "canceled"
  | "blocked"

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
export const RETRY_CREDIT_COST = 1
export const DOWNLOADS_PAGE_DEFAULT = 50
export const DOWNLOADS_PAGE_MAX = 100

export type DownloadRequest = Pick<RouteRequest, "headers" | "body">

export class Downloads {
  timings: DownloadTimings
  readonly #clock: EmulatorClock
  readonly #host: DownloadHost
  readonly #webhooks: WebhookSender
  readonly #records = new Map<string, DownloadRecord>()
  readonly #selections: SelectionStore<Pending>
  readonly #cursorKey = randomBytes(32)
  #seq = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  #disposed = false

  constructor(options: {
    readonly clock: EmulatorClock
    readonly host: DownloadHost
    readonly webhooks: WebhookSender
    readonly timings?: DownloadTimings
    readonly selectionLifetimeMs?: number
  }) {
    this.#clock = options.clock
    this.#host = options.host
    this.#webhooks = options.webhooks
    this.timings = options.timings ?? DEFAULT_TIMINGS
    this.#selections = new SelectionStore(options.selectionLifetimeMs)
  }

  /** POST /downloads with `{url | magnet, client_reference?, webhook_url?, directory?}`. */
  create(principal: Principal | undefined, request: DownloadRequest): RouteResult {
    if (principal === undefined) return UNAUTHORIZED
    const body = readJsonBody(request, 1024 * 1024)
    if (!body.ok) return body.error
    if (!isJsonObject(body.value)) return apiError(422, "validation_failed", "The body must be a JSON object")
    const fields = body.value
    const problems: Record<string, Array<string>> = {}
    let source: Source | undefined
    const { url, magnet } = fields
    if (url !== undefined && magnet !== undefined) problems.url = ["give either url or magnet, not both"]
    else if (typeof url === "string") {
      if (/^https?:\/\/[^/]/i.test(url) && URL.canParse(url)) source = { type: "url", url }
      else problems.url = ["must be an absolute http or https URL"]
    } else if (typeof magnet === "string") {
      const parsed = parseMagnet(magnet)
      if ("problem" in parsed) problems.magnet = [parsed.problem]
      else source = { type: "magnet", magnet, ...parsed }
    } else if (url !== undefined) problems.url = ["must be a string"]
    else if (magnet !== undefined) problems.magnet = ["must be a string"]
    else problems.url = ["url or magnet is required"]
    const common = this.#commonFields(fields, problems)
    if (source === undefined || common === undefined) return validation(problems)
    return this.#start(principal, { source, ...common })
  }

  /** POST /downloads/upload: multipart/form-data with a .torrent or .nzb `file` part. */
  upload(principal: Principal | undefined, request: DownloadRequest): RouteResult {
    if (principal === undefined) return UNAUTHORIZED
    const type = request.headers["content-type"] ?? ""
    if (!/^multipart\/form-data\s*;/i.test(type)) {
      return apiError(415, "unsupported_media_type", "Content-Type must be multipart/form-data")
    }
    const parts = parseMultipart(type, request.body)
    if (typeof parts === "string") return apiError(400, "invalid_multipart", parts)
    const file = parts.find((p) => p.name === "file" && p.fileName !== undefined)
    if (file === undefined) return validation({ file: ["a file part named file is required"] })
    const uploaded = uploadedSource(file)
    if ("unsupported" in uploaded) return apiError(415, "unsupported_media_type", uploaded.unsupported)
    if ("invalid" in uploaded) return validation({ file: [uploaded.invalid] })
    const text: Record<string, unknown> = {}
    for (const part of parts) if (part.fileName === undefined) text[part.name] = part.data.toString("utf8")
    const problems: Record<string, Array<string>> = {}
    const common = this.#commonFields(text, problems)
    if (common === undefined) return validation(problems)
    return this.#start(principal, { source: uploaded.source, ...common })
  }

  /** GET /downloads: newest first, cursor pages, optional exact `client_reference`. */
  list(principal: Principal | undefined, query: URLSearchParams): RouteResult {
    if (principal === undefined) return UNAUTHORIZED
    this.tick()
    const limitText = query.get("limit")
    const limit = limitText === null ? DOWNLOADS_PAGE_DEFAULT : Number(limitText)
    if (!Number.isInteger(limit) || limit < 1 || limit > DOWNLOADS_PAGE_MAX || !/^\d+$/.test(limitText ?? "1")) {
      return validation({ limit: [`must be an integer from 1 to ${DOWNLOADS_PAGE_MAX}`] })
    }
    const reference = query.get("client_reference")
    const cursorText = query.get("cursor")
    let before = Number.POSITIVE_INFINITY
    if (cursorText !== null) {
      const seq = this.#readCursor(cursorText, principal.userId, reference)
      if (seq === undefined) return validation({ cursor: ["is not a cursor of this list"] })
      before = seq
    }
    const matching = [...this.#records.values()]
      .filter((r) => r.userId === principal.userId && r.seq < before)
      .filter((r) => reference === null || r.clientReference === reference)
      .sort((a, b) => b.seq - a.seq)
    const page = matching.slice(0, limit)
    const last = page[page.length - 1]
    const hasMore = matching.length > limit && last !== undefined
    return {
      kind: "json",
      status: 200,
      body: {
        data: page.map(downloadJson),
        meta: { next_cursor: hasMore ? this.#cursor(last.seq, principal.userId, reference) : null, has_more: hasMore }
      }
    }
  }

  /** GET /downloads/{id}. */
  get(principal: Principal | undefined, id: string): RouteResult {
    this.tick()
    const record = this.#own(principal, id)
    return record === undefined ? NOT_FOUND : { kind: "json", status: 200, body: { data: downloadJson(record) } }
  }

  /** DELETE /downloads/{id}: removes the record (files stay; an active download stops silently). */
  remove(principal: Principal | undefined, id: string): RouteResult {
    const record = this.#own(principal, id)
    if (record === undefined) return NOT_FOUND
    this.#records.delete(id)
    this.tick()
    return { kind: "empty", status: 204 }
  }

  /** POST /downloads/{id}/cancel: only while `can_cancel` (409 otherwise). */
  cancel(principal: Principal | undefined, id: string): RouteResult {
    this.tick()
    const record = this.#own(principal, id)
    if (record === undefined) return NOT_FOUND
    if (!canCancel(record.status)) {
      return apiError(409, "download_not_cancelable", `A ${record.status} download cannot be canceled`)
    }
    this.#finish(record, "canceled", null)
    this.tick()
    return { kind: "json", status: 200, body: { data: downloadJson(record) } }
  }

  /** POST /downloads/{id}/retry: only while `can_retry` (409), for one credit (402 without). */
  retry(principal: Principal | undefined, id: string): RouteResult {
    this.tick()
    const record = this.#own(principal, id)
    if (record === undefined) return NOT_FOUND
    if (!canRetry(record.status))
      return apiError(409, "download_not_retryable", `A ${record.status} download cannot be retried`)
    if (!this.#host.spendCredit(record.userId, RETRY_CREDIT_COST)) {
      return apiError(402, "insufficient_credits", "A retry costs one credit and the account has none left")
    }
    record.attempt++
    record.status = "queued"
    record.error = null
    record.fileId = null
    record.activity = null
    record.progress = 0
    record.stageStartedAt = this.#clock.nowMs()
    record.updatedAt = this.#clock.tick()
    this.tick()
    return { kind: "json", status: 200, body: { data: downloadJson(record) } }
  }

  /** GET /download-selections/{id}. */
  getSelection(principal: Principal | undefined, id: string): RouteResult {
    if (principal === undefined) return UNAUTHORIZED
    const selection = this.#selections.get(principal.userId, id)
    if (selection === undefined) return apiError(404, "not_found", "Selection not found")
    return { kind: "json", status: 200, body: { data: selectionJson(selection) } }
  }

  /** POST /download-selections/{id}/choices `{item_id}`: the next stage (200) or the download (201). */
  choose(principal: Principal | undefined, id: string, request: DownloadRequest): RouteResult {
    if (principal === undefined) return UNAUTHORIZED
    const body = readJsonBody(request, 64 * 1024)
    if (!body.ok) return body.error
    const itemId = isJsonObject(body.value) ? body.value.item_id : undefined
    const chosen = this.#selections.choose(principal.userId, id, itemId, this.#clock.nowMs())
    if ("error" in chosen) return chosen.error
    return this.#proceed(principal.userId, chosen.selection.pending, chosen.chosen)
  }

  /** Applies every transition that is due by the clock, then schedules the next one. */
  tick(): void {
    if (this.#disposed) return
    let changed = true
    while (changed) {
      changed = false
      const now = this.#clock.nowMs()
      for (const record of this.#ordered()) {
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
    return this.#ordered().map((r) => ({ id: r.id, userId: r.userId, status: r.status }))
  }

  /** Stops the timer (the emulator's close). */
  dispose(): void {
    this.#disposed = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
  }

  #commonFields(
    fields: Readonly<Record<string, unknown>>,
    problems: Record<string, Array<string>>
  ): Omit<Pending, "source" | "credential"> | undefined {
    const { client_reference: reference, webhook_url: webhook, directory } = fields
    let clientReference: string | null = null
    if (reference !== undefined && reference !== null) {
      if (typeof reference !== "string" || reference.length === 0 || reference.length > 255) {
        problems.client_reference = ["must be a string of 1 to 255 characters"]
      } else clientReference = reference
    }
    let webhookUrl: string | null = null
    if (webhook !== undefined && webhook !== null) {
      const problem = typeof webhook === "string" ? this.#webhooks.urlProblem(webhook) : "must be a string"
      if (problem !== undefined) problems.webhook_url = [problem]
      else if (typeof webhook === "string") webhookUrl = webhook
    }
    let folder = ""
    if (directory !== undefined && directory !== null) {
      const normalized = typeof directory === "string" ? normalizeDirectory(directory) : undefined
      if (normalized === undefined) {
        problems.directory = ["must be a folder path without empty, '.' or '..' segments or control characters"]
      } else folder = normalized
    }
    if (Object.keys(problems).length > 0) return undefined
    return { clientReference, webhookUrl, directory: folder }
  }

  #start(principal: Principal, fields: Omit<Pending, "credential">): RouteResult {
    const credential = principal.kind === "apiKey" ? `apiKey:${principal.userId}` : `oauth:${principal.clientId}`
    return this.#proceed(principal.userId, { ...fields, credential }, [])
  }

  #proceed(userId: string, pending: Pending, chosen: ReadonlyArray<string>): RouteResult {
    const plan = planSource(pending.source, chosen)
    if (plan === undefined) return apiError(422, "validation_failed", "The choice does not fit this source")
    if (plan.kind === "choose") {
      const selection = this.#selections.create(userId, pending, chosen, plan.items, this.#clock.nowMs())
      return { kind: "json", status: 200, body: { data: { kind: "selection", selection: selectionJson(selection) } } }
    }
    if (!this.#host.takeDailyDownload(userId)) {
      return apiError(402, "daily_limit_reached", "The account's daily download limit is used up")
    }
    const now = this.#clock.tick()
    const record: DownloadRecord = {
      id: `dl_${randomBytes(9).toString("base64url")}`,
      seq: ++this.#seq,
      userId,
      attempt: 1,
      status: "queued",
      name: plan.name,
      type: plan.type,
      sourceKind: pending.source.type,
      folder: plan.folder,
      files: plan.files,
      sizeBytes: plan.files.reduce((n, f) => n + f.sizeBytes, 0),
      progress: 0,
      fileId: null,
      activity: null,
      error: null,
      clientReference: pending.clientReference,
      webhookUrl: pending.webhookUrl,
      directory: pending.directory,
      credential: pending.credential,
      failsWhileDownloading: sourceName(pending.source).toLowerCase().includes("fail"),
      createdAt: now,
      updatedAt: now,
      stageStartedAt: this.#clock.nowMs()
    }
    this.#records.set(record.id, record)
    this.tick()
    return { kind: "json", status: 201, body: { data: { kind: "download", download: downloadJson(record) } } }
  }

  #own(principal: Principal | undefined, id: string): DownloadRecord | undefined {
    const record = this.#records.get(id)
    return principal !== undefined && record?.userId === principal.userId ? record : undefined
  }

  #ordered(): Array<DownloadRecord> {
    return [...this.#records.values()].sort((a, b) => a.seq - b.seq)
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
    for (const record of this.#ordered()) {
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

  #cursor(seq: number, userId: string, reference: string | null): string {
    const payload = Buffer.from(JSON.stringify({ s: seq })).toString("base64url")
    return `${payload}.${this.#sign(payload, userId, reference)}`
  }

  #readCursor(cursor: string, userId: string, reference: string | null): number | undefined {
    const [payload = "", signature = ""] = cursor.split(".")
    if (signature !== this.#sign(payload, userId, reference)) return undefined
    try {
      const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
      return isJsonObject(decoded) && typeof decoded.s === "number" ? decoded.s : undefined
    } catch {
      return undefined
    }
  }

  #sign(payload: string, userId: string, reference: string | null): string {
    return createHmac("sha256", this.#cursorKey)
      .update(`${payload}\u0000${userId}\u0000${reference ?? ""}`)
      .digest("base64url")
  }
}

interface Pending {
  readonly source: Source
  readonly clientReference: string | null
  readonly webhookUrl: string | null
  readonly directory: string
  /** Whose webhook secret signs this download's events: `apiKey:<user>` or `oauth:<client>`. */
  readonly credential: string
}

interface DownloadError {
  readonly code: string
  readonly message: string
}

interface DownloadRecord {
  readonly id: string
  readonly seq: number
  readonly userId: string
  attempt: number
  status: DownloadStatus
  readonly name: string
  readonly type: SourceType
  readonly sourceKind: Source["type"]
  readonly folder: string | null
  readonly files: ReadonlyArray<PlannedFile>
  readonly sizeBytes: number
  progress: number
  fileId: string | null
  activity: "seeding" | null
  error: DownloadError | null
  readonly clientReference: string | null
  readonly webhookUrl: string | null
  readonly directory: string
  readonly credential: string
  readonly failsWhileDownloading: boolean
  /** Microseconds. */
  readonly createdAt: number
  updatedAt: number
  /** Emulator ms when the current state began. */
  stageStartedAt: number
}

const ACTIVE: ReadonlySet<DownloadStatus> = new Set(["processing", "downloading", "finalizing"])
const isActive = (status: DownloadStatus): boolean => ACTIVE.has(status)
const canCancel = (status: DownloadStatus): boolean => status === "queued" || status === "blocked" || isActive(status)
const canRetry = (status: DownloadStatus): boolean => status === "failed" || status === "canceled"

const downloadJson = (r: DownloadRecord) => ({
  id: r.id,
  attempt: r.attempt,
  status: r.status,
  can_cancel: canCancel(r.status),
  can_retry: canRetry(r.status),
  name: r.name,
  type: r.type,
  source_type: r.sourceKind,
  size_bytes: r.sizeBytes,
  progress: Math.round(r.progress * 1000) / 1000,
  file_id: r.fileId,
  activity: r.activity,
  error: r.error,
  client_reference: r.clientReference,
  webhook_url: r.webhookUrl,
  directory: r.directory,
  created_at: formatMicros(r.createdAt),
  updated_at: formatMicros(r.updatedAt)
})

const NOT_FOUND = apiError(404, "not_found", "Download not found")
const UNAUTHORIZED = apiError(401, "unauthorized", "A bearer credential is required")

const validation = (fields: Readonly<Record<string, ReadonlyArray<string>>>): RouteResult =>
  apiError(422, "validation_failed", "The request has invalid fields", fields)

/** "a//b/" → "a/b"; "" and "/" → "" (root); undefined for '.', '..' or control characters. */
const normalizeDirectory = (text: string): string | undefined => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the rule rejects
  if (text.length > 1024 || /[\u0000-\u001f\u007f]/.test(text)) return undefined
  const parts = text.split("/").filter((p) => p !== "")
  if (parts.some((p) => p === "." || p === ".." || p.trim() === "")) return undefined
  return parts.join("/")
}
