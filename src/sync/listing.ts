/**
 * Listing mode: how dlsync mirrors when the change feed is not available (a personal API
 * key, or any credential the feed answers 401/403).
 *
 *   full walk:  rebuild ─► GET /files?flatten=true&limit=100[&cursor] ─► applyPage … ─► last page:
 *               (new generation)                                          rows not listed removed
 *   poll:       GET /files?flatten=true&updated_after=<watermark − 1 s> ─► applyPage … (no removals)
 *
 * Invariants:
 * - Deletions are seen only by a full walk, and only when it completes: the store removes
 *   what the walk did not list in the transaction of its last page. A walk that fails
 *   midway removes nothing; a crash resumes it from its committed cursor.
 * - A poll only adds and updates. It starts one second before the watermark (the newest
 *   `updated_at` applied) so that items sharing the watermark's timestamp across a page
 *   boundary are not missed; repeating an item is harmless.
 */
import { Effect } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { type ApiError, mustRestartFeed } from "../api/ApiError.ts"
import type { FeedParams, FeedState, Store } from "../store/Store.ts"
import {
  type AppliedPage,
  addOutcome,
  applyNextPage,
  asCursor,
  type CatchUp,
  emptyCatchUp,
  MAX_FEED_RESTARTS,
  type OnPage,
  PAGE_LIMIT
} from "./feed.ts"

/** The query parameters of listing mode. */
export const LISTING_PARAMS: FeedParams = { mode: "listing", kind: null, includeMedia: false, includePoster: false }

/**
 * A full walk of `GET /files?flatten=true`: continues the walk under way (after a crash),
 * else starts a new one. Completes the store's rebuild on its last page.
 */
export const walkListing = Effect.fnUntraced(function* (
  store: Store["Service"],
  api: ApiClient["Service"],
  begun: FeedState,
  reason: string,
  onPage?: OnPage
): Effect.fn.Return<CatchUp, ApiError> {
  let cursor: string | null
  if (begun.rebuild === null) cursor = (yield* store.feed.rebuild(reason)).cursor
  else cursor = begun.cursor
  let total = emptyCatchUp
  let restarts = 0
  while (true) {
    const result = yield* Effect.result(
      applyNextPage(
        store,
        api.files.list({
          flatten: true,
          limit: PAGE_LIMIT,
          ...posterQuery(begun),
          ...(cursor === null ? {} : { cursor: asCursor(cursor) })
        })
      )
    )
    total = { ...total, requests: total.requests + 1 }
    if (result._tag === "Failure") {
      // A listing cursor the service no longer accepts: walk again from the start.
      if (cursor !== null && mustRestartFeed(result.failure) && restarts < MAX_FEED_RESTARTS) {
        restarts++
        yield* Effect.logWarning("listing cursor refused; starting the full listing again")
        cursor = (yield* store.feed.rebuild("listing cursor refused")).cursor
        continue
      }
      return yield* result.failure
    }
    restarts = 0
    const applied = result.success
    total = addOutcome(total, applied.outcome, applied.ignored)
    if (onPage !== undefined) yield* onPage({ pages: total.pages, items: total.upserted })
    cursor = applied.nextCursor
    if (!applied.hasMore) return total
  }
})

/** Additions and edits since the watermark; sees no deletions. */
export const pollListing = Effect.fnUntraced(function* (
  store: Store["Service"],
  api: ApiClient["Service"],
  begun: FeedState
): Effect.fn.Return<CatchUp, ApiError> {
  const since = pollStart(begun.watermark)
  let cursor: string | null = null
  let total = emptyCatchUp
  while (true) {
    // Outside a rebuild the stored cursor is not used to resume (a poll restarts from the
    // watermark), so committing the poll's own cursor is harmless.
    const applied: AppliedPage = yield* applyNextPage(
      store,
      api.files.list({
        flatten: true,
        limit: PAGE_LIMIT,
        ...posterQuery(begun),
        ...(since === undefined ? {} : { updatedAfter: since }),
        ...(cursor === null ? {} : { cursor: asCursor(cursor) })
      })
    )
    total = addOutcome({ ...total, requests: total.requests + 1 }, applied.outcome, applied.ignored)
    cursor = applied.nextCursor
    if (!applied.hasMore) return total
  }
})

/** One second before the watermark, as RFC 3339; undefined when there is none. */
export const pollStart = (watermark: string | null): string | undefined => {
  if (watermark === null) return undefined
  const at = Date.parse(watermark)
  return Number.isNaN(at) ? undefined : new Date(at - 1000).toISOString()
}

/** `include_poster=true` when the listing is made with posters (posters on); nothing otherwise. */
const posterQuery = (state: FeedState): { readonly includePoster?: true } =>
  state.params.includePoster ? { includePoster: true } : {}
