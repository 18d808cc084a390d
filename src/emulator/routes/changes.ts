/**
 * GET /files/changes, the change feed, per the spec's eight rules:
 *
 * 1. Without a cursor: every existing item (tombstones older than the call are skipped).
 * 2. With a cursor: items whose log entry is newer than the cursor; [] means no change.
 * 3. Live items carry the GET /files fields plus deleted=false.
 * 4. Deleted items, and items outside the sent `kind`, carry only id, parent_id, deleted=true.
 *    The emulator does not remember what a client saw, so any changed item outside `kind`
 *    (a folder touched by rule 5, say) comes as a tombstone; applying it is a no-op.
 * 5. Folders gain a log entry whenever a child is added or removed (tree.ts).
 * 6. An item changed while a client pages reappears later; repeats are allowed.
 * 7. A cursor that does not verify: 422; one older than the TTL or the last
 *    "expire cursors": 410 cursor_expired.
 * 8. A cursor is bound to its user, `kind`, `include_media` and `include_poster`; sending
 *    it with others is 422.
 *
 * The cursor is the seq to resume after, signed; every page issues a fresh one.
 */

import type { EmulatorContext } from "../context.ts"
import { apiError, ok, type Route, type RouteRequest, type RouteResult, validationFailed } from "../http.ts"
import { isKind, KINDS } from "../kinds.ts"
import { QueryReader } from "../query.ts"
import { renderItem, renderTombstone } from "../records.ts"
import { decodeToken, encodeToken } from "../signedToken.ts"
import { callerOf } from "./common.ts"

export const changesRoutes = (context: EmulatorContext): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/api/v1/files/changes",
    auth: { kind: "bearer", apiKey: context.options.allowApiKeyChanges === true, oauthScopes: ["files:read"] },
    handle: (request) => listChanges(context, request)
  }
]

const listChanges = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const query = new QueryReader(request.url.searchParams)
  const limit = query.int("limit", { fallback: 100, min: 1, max: 100 })
  const cursor = query.string("cursor")
  const kindParam = query.string("kind")
  const kinds = kindParam === undefined ? undefined : new Set(kindParam.split(",").map((kind) => kind.trim()))
  if (kinds !== undefined && ![...kinds].every(isKind))
    query.fail("kind", `each kind must be one of ${KINDS.join(", ")}`)
  const includePoster = query.bool("include_poster")
  const includeMedia = query.bool("include_media")
  if (query.error) return query.error

  const { state } = context
  const user = callerOf(context, request)
  const tree = user.tree
  const binding = { k: kinds === undefined ? null : [...kinds].sort().join(","), m: includeMedia, p: includePoster }
  let after = 0
  let tombstonesAfter = tree.seq
  if (cursor !== undefined) {
    const payload = decodeToken(state, `changes:${user.id}`, cursor)
    if (
      payload === undefined ||
      typeof payload.a !== "number" ||
      typeof payload.t !== "number" ||
      typeof payload.e !== "number" ||
      typeof payload.i !== "number"
    ) {
      return validationFailed({ cursor: ["is not a cursor this service issued, or was altered"] })
    }
    if (payload.k !== binding.k || payload.m !== binding.m || payload.p !== binding.p) {
      return validationFailed({ cursor: ["was issued for other kind, include_media or include_poster values"] })
    }
    if (payload.e < state.cursorEpoch || state.clock.nowMs() - payload.i > state.cursorTtlMs) {
      return apiError(410, "cursor_expired", "Changes after this cursor can no longer be reported; restart without it")
    }
    after = payload.a
    tombstonesAfter = payload.t
  }

  const page = tree.changesAfter(after, limit, tombstonesAfter, (item) =>
    kinds === undefined || kinds.has(item.kind) ? "item" : "tombstone"
  )
  const options = {
    media: includeMedia ? ("summary" as const) : ("none" as const),
    poster: includePoster,
    posterBase: context.urls.cdnOrigin
  }
  const data = page.changes.map((change) =>
    change.deleted
      ? renderTombstone(change.tombstone.id, change.tombstone.parentId)
      : { ...renderItem(change.item, options), deleted: false }
  )
  const next = encodeChangeCursor(context, user.id, { after: page.nextAfter, tombstonesAfter, ...binding })
  return ok(data, { next_cursor: next, has_more: page.hasMore })
}

/**
 * A cursor resuming after log seq `after`, bound to a user and the feed parameters
 * (`kinds`: sorted, comma-joined, or null), stamped with the current epoch and time.
 */
export const encodeChangeCursor = (
  context: EmulatorContext,
  userId: string,
  cursor: {
    readonly after: number
    readonly tombstonesAfter: number
    readonly k: string | null
    readonly m: boolean
    readonly p: boolean
  }
): string =>
  encodeToken(context.state, `changes:${userId}`, {
    a: cursor.after,
    t: cursor.tombstonesAfter,
    k: cursor.k,
    m: cursor.m,
    p: cursor.p,
    e: context.state.cursorEpoch,
    i: context.state.clock.nowMs()
  })
