/**
 * The change feed (GET /files/changes). The consumer commits each page together with its
 * `nextCursor` (and the query it was made with) in one transaction, so it reads one page
 * at a time with `page`; `pages` streams them for a full initial listing.
 *
 * All requests of one synchronisation must use the same `ChangesQuery`. On
 * `mustRestartFeed(error)` (410 cursor_expired, or 422 on the cursor) the consumer drops
 * its cursor and starts again without one.
 */
import { Effect, type Stream } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import type { ApiHttp } from "./ApiHttp.ts"
import { decodePage, type Page, paginate } from "./paginate.ts"
import { CHANGES_PAGE_MAX, checkId, checkKinds, checkLimit, firstProblem } from "./requestChecks.ts"
import type { Cursor } from "./schemas/common.ts"
import { ChangeItem } from "./schemas/files.ts"

export interface ChangesQuery {
  /** 1..100; the service defaults to 100. */
  readonly limit?: number
  /** Only these kinds; an item leaving the filter arrives as a tombstone. */
  readonly kinds?: ReadonlyArray<string>
  readonly includeMedia?: boolean
  readonly includePoster?: boolean
  readonly requestId?: string
}

export interface ChangesApi {
  /** One page: from the start when `cursor` is undefined, else the changes since it. */
  page(query: ChangesQuery, cursor?: Cursor): Effect.Effect<Page<ChangeItem>, ApiError>
  /** Pages from `cursor` until `has_more` is false. */
  pages(query: ChangesQuery, cursor?: Cursor): Stream.Stream<Page<ChangeItem>, ApiError>
}

export const makeChangesApi = (http: ApiHttp["Service"]): ChangesApi => {
  const page = Effect.fn("ChangesApi.page")(function* (query: ChangesQuery, cursor?: Cursor) {
    const operation = "GET /files/changes"
    yield* refuseIf(
      operation,
      firstProblem(checkLimit(query.limit, CHANGES_PAGE_MAX), checkKinds(query.kinds), checkId("cursor", cursor))
    )
    const params: Array<readonly [string, string]> = []
    if (query.limit !== undefined) params.push(["limit", String(query.limit)])
    if (cursor !== undefined) params.push(["cursor", cursor])
    if (query.kinds !== undefined) params.push(["kind", query.kinds.join(",")])
    if (query.includePoster !== undefined) params.push(["include_poster", String(query.includePoster)])
    if (query.includeMedia !== undefined) params.push(["include_media", String(query.includeMedia)])
    const response = yield* http.send({
      method: "GET",
      root: "api",
      path: "/files/changes",
      query: params,
      idempotency: "idempotent",
      ...(query.requestId !== undefined ? { requestId: query.requestId } : {})
    })
    return yield* decodeChangesPage(response, cursor)
  })
  return { page, pages: (query, cursor) => paginate(cursor, (c) => page(query, c)) }
}

// ---------------------------------------------------------------------------------------

const decodeChangesPage = decodePage(ChangeItem)
