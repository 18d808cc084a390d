/**
 * The change-feed consumer (GET /files/changes): brings the Store up to date with the
 * account, one page per transaction.
 *
 *   feed state ──► cursor? ──► GET /files/changes?limit=100[&cursor] ──► applyPage(items + next_cursor)
 *                    │                  │                                   │  (one transaction)
 *                    │                  ├─ 410 cursor_expired / 422 cursor ─► store.feed.rebuild ─┐
 *                    │                  └─ 401 / 403 ─► FeedRefused (the engine turns to listing)  │
 *                    └──────────────────────── has_more ◄─────────────────────────────────────────┘
 *
 * Invariants:
 * - A page and the cursor that follows it commit together (Store.applyPage); a crash between
 *   pages resumes from the last committed cursor, so a page is applied at least once and a
 *   repeated item is harmless (upserts and deletes by id).
 * - A rebuild (410, 422, no cursor to resume from) is a full listing into a new generation:
 *   what it does not contain is removed only when its last page commits, so no deletion is
 *   ever derived from an incomplete listing; an interrupted rebuild resumes from its cursor.
 * - Every request of one synchronisation uses the same query (the change feed's rule 8 in docs/download-service-api.md): no `kind`,
 *   no media, and posters only when they are on (the stored params say which, and turning
 *   them on or off restarts the feed). Filters apply locally, so a filter change never
 *   restarts the feed.
 */
import { Effect, Schema } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { type ApiError, isAuthProblem, mustRestartFeed } from "../api/ApiError.ts"
import type { ChangesQuery } from "../api/changes.ts"
import type { Page } from "../api/paginate.ts"
import { Cursor } from "../api/schemas/common.ts"
import type { ChangeItem, FileRecord } from "../api/schemas/files.ts"
import { isLoginRequired } from "../auth/AuthError.ts"
import { type RemoteChange, type RemoteItem, remove, upsert } from "../domain/RemoteItem.ts"
import type { FeedParams, FeedState, PageOutcome, Store } from "../store/Store.ts"

/** The page size of every feed and listing request (the service's maximum). */
export const PAGE_LIMIT = 100

/** Consecutive cursor restarts (410/422 without a page in between) before giving up. */
export const MAX_FEED_RESTARTS = 3

/** The query parameters of the change feed; kept constant (the change feed's rule 8 in docs/download-service-api.md). */
export const CHANGES_PARAMS: FeedParams = { mode: "changes", kind: null, includeMedia: false, includePoster: false }

/** What one catch-up did. */
export interface CatchUp {
  readonly pages: number
  readonly requests: number
  readonly upserted: number
  readonly deleted: number
  /** Items a completed full listing no longer contained, removed from the store. */
  readonly removedUnlisted: number
  /** A full listing completed during this catch-up. */
  readonly listingCompleted: boolean
  /** Records the engine could not use (unknown `type`), each already logged. */
  readonly ignored: number
}

export const emptyCatchUp: CatchUp = {
  pages: 0,
  requests: 0,
  upserted: 0,
  deleted: 0,
  removedUnlisted: 0,
  listingCompleted: false,
  ignored: 0
}

/** Called after each committed page, for progress displays. */
export type OnPage = (progress: { readonly pages: number; readonly items: number }) => Effect.Effect<void>

/**
 * The change feed refused the credential (401/403). The engine mirrors by listing instead
 * (a personal API key cannot read /files/changes).
 */
export class FeedRefused extends Schema.TaggedError<FeedRefused>()("FeedRefused", {
  status: Schema.Number,
  detail: Schema.String
}) {}

/**
 * Follows the change feed from the store's cursor until `has_more` is false. `state` is the
 * feed state after `store.feed.begin(CHANGES_PARAMS, …)`.
 */
export const catchUpChanges = Effect.fnUntraced(function* (
  store: Store["Service"],
  api: ApiClient["Service"],
  begun: FeedState,
  onPage?: OnPage
): Effect.fn.Return<CatchUp, ApiError | FeedRefused> {
  let state = begun
  if (state.cursor === null && state.rebuild === null) {
    // Nothing to resume from (the service ended a sync without a cursor): list everything again.
    state = yield* store.feed.rebuild("no cursor to resume the change feed from")
  }
  const query: ChangesQuery = { limit: PAGE_LIMIT, includeMedia: false, includePoster: state.params.includePoster }
  let cursor: string | null = state.cursor
  let total = emptyCatchUp
  let restarts = 0
  while (true) {
    const sent = cursor === null ? undefined : asCursor(cursor)
    const result = yield* Effect.result(applyNextPage(store, api.changes.page(query, sent)))
    total = { ...total, requests: total.requests + 1 }
    if (result._tag === "Failure") {
      const error = result.failure
      if (mustRestartFeed(error) && restarts < MAX_FEED_RESTARTS) {
        restarts++
        const why = error.reason._tag === "CursorExpired" ? "cursor expired (410)" : "cursor refused (422)"
        yield* Effect.logWarning(`change feed: ${why}; starting a full listing`)
        yield* store.feed.rebuild(why)
        cursor = null
        continue
      }
      // A sign-in that needs a person (OAuth refresh refused) is not a key the feed refuses.
      if (isAuthProblem(error) && !isLoginRequired(error)) {
        const status = "status" in error.reason ? error.reason.status : 401
        return yield* new FeedRefused({ status, detail: error.message })
      }
      return yield* error
    }
    restarts = 0
    const applied = result.success
    total = addOutcome(total, applied.outcome, applied.ignored)
    if (onPage !== undefined) yield* onPage({ pages: total.pages, items: total.upserted + total.deleted })
    cursor = applied.nextCursor
    if (!applied.hasMore) return total
  }
})

/** What applying one page did, and where the next one starts. */
export interface AppliedPage {
  readonly outcome: PageOutcome
  readonly ignored: number
  readonly nextCursor: string | null
  readonly hasMore: boolean
}

/**
 * Fetches one page (feed or listing) and applies it in one transaction; the loops of the
 * feed and of listing mode keep only this summary, not the page, while the next one loads.
 */
export const applyNextPage = Effect.fnUntraced(function* (
  store: Store["Service"],
  fetch: Effect.Effect<Page<ChangeItem | FileRecord>, ApiError>
): Effect.fn.Return<AppliedPage, ApiError> {
  const page = yield* fetch
  const { changes, ignored } = toChanges(page.items)
  const outcome = yield* store.feed.applyPage({ changes, nextCursor: page.nextCursor, hasMore: page.hasMore })
  return { outcome, ignored, nextCursor: page.nextCursor, hasMore: page.hasMore }
})

/**
 * A wire record as a remote item; undefined for a `type` the engine does not know or an
 * empty id. The record was decoded and checked by the API client's schema (sizes are
 * non-negative integers, timestamps strings), so it is mapped field by field without a
 * second decode.
 */
export const recordToItem = (record: FileRecord): RemoteItem | undefined => {
  if ((record.type !== "file" && record.type !== "folder") || record.id === "") return undefined
  return {
    id: record.id,
    parentId: record.parent_id,
    name: record.name,
    type: record.type,
    kind: record.kind,
    size: record.size_bytes,
    mimeType: record.mime_type,
    locked: record.locked,
    updatedAt: record.updated_at,
    createdAt: record.created_at,
    expiresAt: record.expires_at,
    ...(record.download_id === null ? {} : { downloadId: record.download_id }),
    ...(record.poster == null ? {} : { posterUrl: record.poster.url })
  }
}

/** Wire records → remote changes; records of an unknown type are counted, not guessed at. */
export const toChanges = (
  items: ReadonlyArray<ChangeItem | FileRecord>
): { readonly changes: ReadonlyArray<RemoteChange>; readonly ignored: number } => {
  const changes: Array<RemoteChange> = []
  let ignored = 0
  for (const record of items) {
    if ("deleted" in record && record.deleted === true) {
      changes.push(remove(record.id))
      continue
    }
    if (!("name" in record)) continue
    const item = recordToItem(record)
    if (item !== undefined) changes.push(upsert(item))
    else ignored++
  }
  return { changes, ignored }
}

export const addOutcome = (
  total: CatchUp,
  outcome: {
    readonly upserted: number
    readonly deleted: number
    readonly completedGeneration: number | null
    readonly removedUnlisted: number
  },
  ignored: number
): CatchUp => ({
  pages: total.pages + 1,
  requests: total.requests,
  upserted: total.upserted + outcome.upserted,
  deleted: total.deleted + outcome.deleted,
  removedUnlisted: total.removedUnlisted + outcome.removedUnlisted,
  listingCompleted: total.listingCompleted || outcome.completedGeneration !== null,
  ignored: total.ignored + ignored
})

/** A stored cursor, sent back unchanged. */
export const asCursor = (raw: string): Cursor => decodeCursor(raw)

// ---------------------------------------------------------------------------------------

const decodeCursor = Schema.decodeUnknownSync(Cursor)
