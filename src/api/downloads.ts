/**
 * Downloads: list, create (URL or magnet), upload (torrent or Usenet file), detail,
 * delete, cancel and retry. Creation is asynchronous: a `download` outcome means accepted,
 * not finished; a `selection` outcome needs a choice first (see selections.ts).
 *
 * Creation, upload, cancel and retry are never sent twice unless the first attempt
 * provably never reached the service: a replay would create, bill or restart again.
 */
import { Effect, Option, type Stream } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, decodeBody, segment } from "./ApiHttp.ts"
import { decodePage, type Page, paginate } from "./paginate.ts"
import { checkId, checkLimit, checkNonEmpty, checkWebhookUrl, firstProblem } from "./requestChecks.ts"
import { type Cursor, DataEnvelope, type DownloadId } from "./schemas/common.ts"
import { Download, DownloadOutcome } from "./schemas/downloads.ts"

/** Page size bound assumed for GET /downloads (not shown in the spec; mirrors GET /files). */
export const DOWNLOADS_PAGE_MAX = 100

export interface ListDownloadsOptions {
  readonly limit?: number
  readonly cursor?: Cursor
  /** Only downloads carrying this correlation label. */
  readonly clientReference?: string
}

/** Options every creation takes. */
export interface CreateOptions {
  /** A non-unique correlation label. */
  readonly clientReference?: string
  /** A public https URL that receives the terminal webhook events. */
  readonly webhookUrl?: string
  /** Folder path for the result. */
  readonly directory?: string
}

/** A source to download: an http(s) URL (`url`) or a magnet URI (`magnet`), sent in the field of that name. */
export type CreateInput = CreateOptions & ({ readonly url: string } | { readonly magnet: string })

export interface UploadInput extends CreateOptions {
  readonly fileName: string
  readonly content: Uint8Array
  /** e.g. application/x-bittorrent, application/x-nzb. */
  readonly contentType?: string
}

export interface DownloadsApi {
  list(options?: ListDownloadsOptions): Effect.Effect<Page<Download>, ApiError>
  listPages(options?: ListDownloadsOptions): Stream.Stream<Page<Download>, ApiError>
  /** POST /downloads from an http(s) URL or a magnet URI. */
  create(input: CreateInput): Effect.Effect<DownloadOutcome, ApiError>
  /** POST /downloads/upload (multipart/form-data, field `file`). */
  upload(input: UploadInput): Effect.Effect<DownloadOutcome, ApiError>
  get(id: DownloadId): Effect.Effect<Download, ApiError>
  /** Removes the record (not the files, and not a cancel). */
  delete(id: DownloadId): Effect.Effect<void, ApiError>
  /** Stops it; the record stays. Returns the record when the service sends one. */
  cancel(id: DownloadId): Effect.Effect<Option.Option<Download>, ApiError>
  /** Starts another attempt (same id, higher `attempt`); may cost credit. */
  retry(id: DownloadId): Effect.Effect<Option.Option<Download>, ApiError>
}

export const makeDownloadsApi = (http: ApiHttp["Service"]): DownloadsApi => {
  const fetchPage = Effect.fn("DownloadsApi.list")(function* (
    options: ListDownloadsOptions,
    cursor: Cursor | undefined
  ) {
    yield* refuseIf(
      "GET /downloads",
      firstProblem(checkLimit(options.limit, DOWNLOADS_PAGE_MAX), checkId("cursor", cursor))
    )
    const query: Array<readonly [string, string]> = []
    if (options.limit !== undefined) query.push(["limit", String(options.limit)])
    if (cursor !== undefined) query.push(["cursor", cursor])
    if (options.clientReference !== undefined) query.push(["client_reference", options.clientReference])
    const response = yield* http.send({
      method: "GET",
      root: "api",
      path: "/downloads",
      query,
      idempotency: "idempotent"
    })
    return yield* decodeDownloadsPage(response, cursor)
  })

  const action = (name: "cancel" | "retry") =>
    Effect.fn(`DownloadsApi.${name}`)(function* (id: DownloadId) {
      const operation = `POST /downloads/{download}/${name}`
      yield* refuseIf(operation, checkId("download", id))
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: `/downloads/${segment(id)}/${name}`,
        template: `/downloads/{download}/${name}`,
        idempotency: "unsafe"
      })
      if (response.status === 204 || response.text === "") return Option.none()
      return Option.some((yield* decodeBody(DataEnvelope(Download))(response)).data)
    })

  return {
    list: (options = {}) => fetchPage(options, options.cursor),
    listPages: (options = {}) => paginate(options.cursor, (cursor) => fetchPage(options, cursor)),
    create: Effect.fn("DownloadsApi.create")(function* (input) {
      const source = "url" in input ? { url: input.url } : { magnet: input.magnet }
      yield* refuseIf("POST /downloads", firstProblem(checkSource(input), ...checkCreate(input)))
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: "/downloads",
        body: { _tag: "Json", value: { ...source, ...createFields(input) } },
        idempotency: "unsafe"
      })
      return (yield* decodeBody(DataEnvelope(DownloadOutcome))(response)).data
    }),
    upload: Effect.fn("DownloadsApi.upload")(function* (input) {
      yield* refuseIf(
        "POST /downloads/upload",
        firstProblem(
          checkNonEmpty("file_name", input.fileName),
          input.content.byteLength === 0 ? { field: "file", message: "must not be empty" } : undefined,
          ...checkCreate(input)
        )
      )
      const form = new FormData()
      const blob = new Blob([new Uint8Array(input.content)], {
        type: input.contentType ?? "application/octet-stream"
      })
      form.append("file", blob, input.fileName)
      for (const [k, v] of Object.entries(createFields(input))) form.append(k, v)
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: "/downloads/upload",
        body: { _tag: "Multipart", form },
        idempotency: "unsafe"
      })
      return (yield* decodeBody(DataEnvelope(DownloadOutcome))(response)).data
    }),
    get: Effect.fn("DownloadsApi.get")(function* (id) {
      yield* refuseIf("GET /downloads/{download}", checkId("download", id))
      const response = yield* http.send({
        method: "GET",
        root: "api",
        path: `/downloads/${segment(id)}`,
        template: "/downloads/{download}",
        idempotency: "idempotent"
      })
      return (yield* decodeBody(DataEnvelope(Download))(response)).data
    }),
    delete: Effect.fn("DownloadsApi.delete")(function* (id) {
      yield* refuseIf("DELETE /downloads/{download}", checkId("download", id))
      yield* http.send({
        method: "DELETE",
        root: "api",
        path: `/downloads/${segment(id)}`,
        template: "/downloads/{download}",
        idempotency: "idempotent"
      })
    }),
    cancel: action("cancel"),
    retry: action("retry")
  }
}

// ---------------------------------------------------------------------------------------

const checkSource = (input: CreateInput) => {
  if ("url" in input) {
    return URL.canParse(input.url) && /^https?:$/.test(new URL(input.url).protocol)
      ? undefined
      : { field: "url", message: "must be an absolute http or https URL" }
  }
  return /^magnet:\?/i.test(input.magnet) ? undefined : { field: "magnet", message: "must be a magnet: URI" }
}

const checkCreate = (input: CreateOptions) => [
  checkWebhookUrl(input.webhookUrl),
  checkNonEmpty("client_reference", input.clientReference),
  checkNonEmpty("directory", input.directory)
]

const createFields = (input: CreateOptions): Record<string, string> => ({
  ...(input.clientReference !== undefined ? { client_reference: input.clientReference } : {}),
  ...(input.webhookUrl !== undefined ? { webhook_url: input.webhookUrl } : {}),
  ...(input.directory !== undefined ? { directory: input.directory } : {})
})

const decodeDownloadsPage = decodePage(Download)
