/**
 * Downloads, the API's side: creation (201 download or 200 selection), listing, cancel,
 * retry and delete. How a download then moves through its states is DownloadLifecycle's
 * (downloadLifecycle.ts), which the control API drives through `lifecycle`.
 *
 * Invariants:
 * - `can_cancel` is true in queued, blocked and the active states; `can_retry` in failed and canceled.
 * - A retry keeps the id, adds one to `attempt` and costs one credit.
 * - Each new download (not a retry) counts against `daily_downloads`; none left is 402.
 * - Other users' downloads and selections are 404.
 */
import { createHmac, randomBytes } from "node:crypto"
import { isJsonObject, readJsonBody } from "./appStorageBody.ts"
import type { EmulatorClock } from "./clock.ts"
import { type DownloadHost, DownloadLifecycle, type DownloadTimings } from "./downloadLifecycle.ts"
import { canCancel, canRetry, type DownloadRecord, downloadJson } from "./downloadRecord.ts"
import { parseMagnet, planSource, type Source, sourceName } from "./downloadsSources.ts"
import { parseMultipart, uploadedSource } from "./downloadsUpload.ts"
import { apiError, type Principal, type RouteRequest, type RouteResult } from "./http.ts"
import { SelectionStore, selectionJson } from "./selections.ts"
import type { WebhookSender } from "./webhooks.ts"

export const RETRY_CREDIT_COST = 1
export const DOWNLOADS_PAGE_DEFAULT = 50
export const DOWNLOADS_PAGE_MAX = 100

export type DownloadRequest = Pick<RouteRequest, "headers" | "body">

export class Downloads {
  /** The state machine every download runs through; the control API drives it directly. */
  readonly lifecycle: DownloadLifecycle
  readonly #clock: EmulatorClock
  readonly #host: DownloadHost
  readonly #webhooks: WebhookSender
  readonly #selections: SelectionStore<Pending>
  readonly #cursorKey = randomBytes(32)
  #seq = 0

  constructor(options: {
    readonly clock: EmulatorClock
    readonly host: DownloadHost
    readonly webhooks: WebhookSender
    readonly timings?: DownloadTimings | undefined
    readonly selectionLifetimeMs?: number
  }) {
    this.#clock = options.clock
    this.#host = options.host
    this.#webhooks = options.webhooks
    this.lifecycle = new DownloadLifecycle(options)
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
    this.lifecycle.tick()
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
    const matching = this.lifecycle
      .ordered()
      .filter((r) => r.userId === principal.userId && r.seq < before)
      .filter((r) => reference === null || r.clientReference === reference)
      .reverse()
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
    this.lifecycle.tick()
    const record = this.#own(principal, id)
    return record === undefined ? NOT_FOUND : { kind: "json", status: 200, body: { data: downloadJson(record) } }
  }

  /** DELETE /downloads/{id}: removes the record (files stay; an active download stops silently). */
  remove(principal: Principal | undefined, id: string): RouteResult {
    const record = this.#own(principal, id)
    if (record === undefined) return NOT_FOUND
    this.lifecycle.remove(id)
    return { kind: "empty", status: 204 }
  }

  /** POST /downloads/{id}/cancel: only while `can_cancel` (409 otherwise). */
  cancel(principal: Principal | undefined, id: string): RouteResult {
    this.lifecycle.tick()
    const record = this.#own(principal, id)
    if (record === undefined) return NOT_FOUND
    if (!canCancel(record.status)) {
      return apiError(409, "download_not_cancelable", `A ${record.status} download cannot be canceled`)
    }
    this.lifecycle.cancel(record)
    return { kind: "json", status: 200, body: { data: downloadJson(record) } }
  }

  /** POST /downloads/{id}/retry: only while `can_retry` (409), for one credit (402 without). */
  retry(principal: Principal | undefined, id: string): RouteResult {
    this.lifecycle.tick()
    const record = this.#own(principal, id)
    if (record === undefined) return NOT_FOUND
    if (!canRetry(record.status))
      return apiError(409, "download_not_retryable", `A ${record.status} download cannot be retried`)
    if (!this.#host.spendCredit(record.userId, RETRY_CREDIT_COST)) {
      return apiError(402, "insufficient_credits", "A retry costs one credit and the account has none left")
    }
    this.lifecycle.retry(record)
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
    this.lifecycle.add(record)
    return { kind: "json", status: 201, body: { data: { kind: "download", download: downloadJson(record) } } }
  }

  #own(principal: Principal | undefined, id: string): DownloadRecord | undefined {
    const record = this.lifecycle.get(id)
    return principal !== undefined && record?.userId === principal.userId ? record : undefined
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
