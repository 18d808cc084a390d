/**
 * Files and folders: list, detail, folder creation, bulk deletion, download links and ZIP
 * links. Links are returned, never fetched here: their hosts never see the bearer.
 */
import { Effect, Schema, type Stream } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, decodeBody, segment } from "./ApiHttp.ts"
import { decodePage, type Page, paginate } from "./paginate.ts"
import {
  checkFlatten,
  checkId,
  checkIdList,
  checkLimit,
  checkNonEmpty,
  checkTimestamp,
  FILES_PAGE_MAX,
  firstProblem
} from "./requestChecks.ts"
import { type Cursor, DataEnvelope, type FileId } from "./schemas/common.ts"
import { BulkDeleteResult, FileRecord, SignedLink } from "./schemas/files.ts"

/** Optional includes shared by listings and detail. */
export interface IncludeOptions {
  /** Adds `app_state` (OAuth with files:read and storage:read). */
  readonly includeState?: boolean
  readonly includePoster?: boolean
  /** Adds `media`: a summary in listings, full stream detail in file detail. */
  readonly includeMedia?: boolean
}

export interface ListFilesOptions extends IncludeOptions {
  /** 1..100; the service defaults to 50. */
  readonly limit?: number
  readonly cursor?: Cursor
  /** Every level in one list; not with a non-empty `parentId`. */
  readonly flatten?: boolean
  readonly parentId?: FileId
  readonly downloadId?: string
  /** One kind value (see FILE_KINDS). */
  readonly kind?: string
  /** RFC 3339 with time zone; only items changed after it (no deletions). */
  readonly updatedAfter?: string
  readonly requestId?: string
}

export interface FilesApi {
  /** One page of GET /files. */
  list(options?: ListFilesOptions): Effect.Effect<Page<FileRecord>, ApiError>
  /** Every page of GET /files from `options.cursor` on. */
  listPages(options?: ListFilesOptions): Stream.Stream<Page<FileRecord>, ApiError>
  /** GET /files/{file}: one record (media with full stream detail when asked). */
  get(id: FileId, options?: IncludeOptions & { readonly requestId?: string }): Effect.Effect<FileRecord, ApiError>
  /** POST /files/folder: creates a folder (at the root when `parentId` is absent). Not retried once sent. */
  createFolder(input: { readonly name: string; readonly parentId?: FileId }): Effect.Effect<FileRecord, ApiError>
  /** POST /files/delete: per-identifier results (`deleted`, `not_found`, `resource_locked`); 200 even on partial failure. */
  deleteMany(ids: ReadonlyArray<FileId>): Effect.Effect<ReadonlyArray<BulkDeleteResult>, ApiError>
  /** POST /files/{file}/download-link: a direct URL with its own expiry. */
  downloadLink(id: FileId): Effect.Effect<SignedLink, ApiError>
  /** POST /files/zip: one ZIP URL for files and folders (`expires_at` null: no time-based expiry). */
  zip(ids: ReadonlyArray<FileId>): Effect.Effect<SignedLink, ApiError>
}

// Built once: a decoder is made per schema, and some of these run once per file.
const decodeFileRecord = decodeBody(DataEnvelope(FileRecord))
const decodeSignedLink = decodeBody(DataEnvelope(SignedLink))

export const makeFilesApi = (http: ApiHttp["Service"]): FilesApi => {
  const fetchPage = Effect.fn("FilesApi.list")(function* (options: ListFilesOptions, cursor: Cursor | undefined) {
    const operation = "GET /files"
    yield* refuseIf(
      operation,
      firstProblem(
        checkLimit(options.limit, FILES_PAGE_MAX),
        checkFlatten(options.flatten, options.parentId),
        checkId("parent_id", options.parentId),
        checkId("download_id", options.downloadId),
        checkNonEmpty("kind", options.kind),
        checkTimestamp("updated_after", options.updatedAfter),
        checkId("cursor", cursor)
      )
    )
    const query: Array<readonly [string, string]> = []
    if (options.limit !== undefined) query.push(["limit", String(options.limit)])
    if (cursor !== undefined) query.push(["cursor", cursor])
    if (options.flatten !== undefined) query.push(["flatten", String(options.flatten)])
    if (options.parentId !== undefined) query.push(["parent_id", options.parentId])
    if (options.downloadId !== undefined) query.push(["download_id", options.downloadId])
    if (options.kind !== undefined) query.push(["kind", options.kind])
    if (options.updatedAfter !== undefined) query.push(["updated_after", options.updatedAfter])
    query.push(...includeQuery(options))
    const response = yield* http.send({
      method: "GET",
      root: "api",
      path: "/files",
      query,
      idempotency: "idempotent",
      ...(options.requestId !== undefined ? { requestId: options.requestId } : {})
    })
    return yield* decodeFilesPage(response, cursor)
  })

  return {
    list: (options = {}) => fetchPage(options, options.cursor),
    listPages: (options = {}) => paginate(options.cursor, (cursor) => fetchPage(options, cursor)),
    get: Effect.fn("FilesApi.get")(function* (id, options = {}) {
      yield* refuseIf("GET /files/{file}", checkId("file", id))
      const response = yield* http.send({
        method: "GET",
        root: "api",
        path: `/files/${segment(id)}`,
        template: "/files/{file}",
        query: includeQuery(options),
        idempotency: "idempotent",
        ...(options.requestId !== undefined ? { requestId: options.requestId } : {})
      })
      return (yield* decodeFileRecord(response)).data
    }),
    createFolder: Effect.fn("FilesApi.createFolder")(function* (input) {
      yield* refuseIf(
        "POST /files/folder",
        firstProblem(checkNonEmpty("name", input.name), checkId("parent_id", input.parentId))
      )
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: "/files/folder",
        body: { _tag: "Json", value: { name: input.name, parent_id: input.parentId ?? null } },
        idempotency: "unsafe"
      })
      return (yield* decodeFileRecord(response)).data
    }),
    deleteMany: Effect.fn("FilesApi.deleteMany")(function* (ids) {
      yield* refuseIf("POST /files/delete", checkIdList("ids", ids))
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: "/files/delete",
        body: { _tag: "Json", value: { ids } },
        idempotency: "idempotent"
      })
      return (yield* decodeBody(DataEnvelope(Schema.Array(BulkDeleteResult)))(response)).data
    }),
    downloadLink: Effect.fn("FilesApi.downloadLink")(function* (id) {
      yield* refuseIf("POST /files/{file}/download-link", checkId("file", id))
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: `/files/${segment(id)}/download-link`,
        template: "/files/{file}/download-link",
        idempotency: "idempotent"
      })
      return (yield* decodeSignedLink(response)).data
    }),
    zip: Effect.fn("FilesApi.zip")(function* (ids) {
      yield* refuseIf("POST /files/zip", checkIdList("ids", ids))
      const response = yield* http.send({
        method: "POST",
        root: "api",
        path: "/files/zip",
        body: { _tag: "Json", value: { ids } },
        idempotency: "idempotent"
      })
      return (yield* decodeSignedLink(response)).data
    })
  }
}

/** The include_* query parameters that are set. */
export const includeQuery = (options: IncludeOptions): Array<readonly [string, string]> => {
  const query: Array<readonly [string, string]> = []
  if (options.includeState !== undefined) query.push(["include_state", String(options.includeState)])
  if (options.includePoster !== undefined) query.push(["include_poster", String(options.includePoster)])
  if (options.includeMedia !== undefined) query.push(["include_media", String(options.includeMedia)])
  return query
}

// ---------------------------------------------------------------------------------------

const decodeFilesPage = decodePage(FileRecord)
