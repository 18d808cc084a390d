/**
 * Cursor pagination. A page is the items plus the cursor that follows them; the stream
 * sends each `next_cursor` back unchanged and stops on `has_more: false`.
 *
 * A page claiming more items without a cursor to fetch them, or handing back the very
 * cursor it was asked with, breaks the protocol: both fail with a Protocol reason instead
 * of stopping early (a silently short listing) or looping forever.
 */
import { Effect, Option, type Schema, Stream } from "effect"
import { ApiError, Protocol } from "./ApiError.ts"
import { type ApiResponse, decodeBody } from "./ApiHttp.ts"
import { type Cursor, PageEnvelope } from "./schemas/common.ts"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** Where the next page starts; null on the last page (and, for the change feed, where to resume later). */
  readonly nextCursor: Cursor | null
  readonly hasMore: boolean
  /** The X-Request-ID of the response this page came from. */
  readonly requestId: string
}

/**
 * The decoder of pages of `item` records: decodes one page of a paginated response and
 * checks its meta. Made once per item schema (the envelope's decoder is built here, not
 * per page).
 */
export const decodePage = <S extends Schema.Top & Schema.Decoder<unknown>>(item: S) => {
  const decodeEnvelope = decodeBody(PageEnvelope(item))
  return (response: ApiResponse, sentCursor: Cursor | undefined): Effect.Effect<Page<S["Type"]>, ApiError> =>
    decodeEnvelope(response).pipe(
      Effect.flatMap((body) => {
        const { next_cursor: nextCursor, has_more: hasMore } = body.meta
        const broken =
          hasMore && nextCursor === null
            ? "meta.has_more is true but meta.next_cursor is null"
            : hasMore && sentCursor !== undefined && nextCursor === sentCursor
              ? "meta.next_cursor repeats the cursor that was sent while has_more is true"
              : undefined
        if (broken !== undefined) {
          return Effect.fail(
            new ApiError({
              operation: response.operation,
              reason: new Protocol({
                status: response.status,
                message: broken,
                field: "meta.next_cursor",
                requestId: response.requestId
              })
            })
          )
        }
        return Effect.succeed({ items: body.data, nextCursor, hasMore, requestId: response.requestId })
      })
    )
}

/**
 * Every page from `start` (undefined: the first page) until `has_more` is false. Pages are
 * fetched one at a time, on demand.
 */
export const paginate = <A, R>(
  start: Cursor | undefined,
  fetch: (cursor: Cursor | undefined) => Effect.Effect<Page<A>, ApiError, R>
): Stream.Stream<Page<A>, ApiError, R> =>
  Stream.paginate(Option.fromUndefinedOr(start), (cursor: Option.Option<Cursor>) =>
    Effect.map(fetch(Option.getOrUndefined(cursor)), (page) => {
      const next: Option.Option<Option.Option<Cursor>> =
        page.hasMore && page.nextCursor !== null ? Option.some(Option.some(page.nextCursor)) : Option.none()
      return [[page], next] as const
    })
  )

/** The items of every page, in order. */
export const items = <A, E, R>(pages: Stream.Stream<Page<A>, E, R>): Stream.Stream<A, E, R> =>
  Stream.flatMap(pages, (page) => Stream.fromIterable(page.items))
