/**
 * GET /files, GET /files/{file}, POST /files/folder, POST /files/delete.
 *
 * Listing: without flatten, parent_id or download_id only root items; flatten lists every
 * level (with a non-empty parent_id: 422); kind and updated_after restrict further.
 * Order: id descending, or with updated_after updated_at ascending then id ascending.
 * Cursors are signed and bound to the filters they were made with (another filter set: 422).
 */

import type { EmulatorContext } from "../context.ts"
import { ok, type Route, type RouteRequest, type RouteResult, readJsonObject, validationFailed } from "../http.ts"
import { compareIds, type Item } from "../item.ts"
import { isKind, KINDS } from "../kinds.ts"
import { partitionPoint } from "../partitionPoint.ts"
import { QueryReader } from "../query.ts"
import { renderItem } from "../records.ts"
import { decodeToken, encodeToken } from "../signedToken.ts"
import type { FileTree } from "../tree.ts"
import { callerOf, checkIncludeState, idList, notFound, recordOptionsFor } from "./common.ts"

const READ = { kind: "bearer", apiKey: true, oauthScopes: ["files:read"] } as const
/** The spec names no scope for writes: any OAuth token or a personal API key. */
const WRITE = { kind: "bearer", apiKey: true, oauthScopes: [] } as const

export const filesRoutes = (context: EmulatorContext): ReadonlyArray<Route> => [
  { method: "GET", path: "/api/v1/files", auth: READ, handle: (request) => listFiles(context, request) },
  { method: "GET", path: "/api/v1/files/:file", auth: READ, handle: (request) => getFile(context, request) },
  { method: "POST", path: "/api/v1/files/folder", auth: WRITE, handle: (request) => createFolder(context, request) },
  { method: "POST", path: "/api/v1/files/delete", auth: WRITE, handle: (request) => deleteFiles(context, request) }
]

/** Most ids one bulk delete accepts. */
export const MAX_DELETE_IDS = 100

const listFiles = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const query = new QueryReader(request.url.searchParams)
  const limit = query.int("limit", { fallback: 50, min: 1, max: 100 })
  const cursor = query.string("cursor")
  const flatten = query.bool("flatten")
  const parentId = query.string("parent_id")
  const downloadId = query.string("download_id")
  const kind = query.string("kind")
  if (kind !== undefined && !isKind(kind)) query.fail("kind", `must be one of ${KINDS.join(", ")}`)
  const updatedAfter = query.timestamp("updated_after")
  const includeState = query.bool("include_state")
  const includePoster = query.bool("include_poster")
  const includeMedia = query.bool("include_media")
  if (flatten && parentId !== undefined) query.fail("parent_id", "must be empty when flatten is true")
  if (query.error) return query.error
  if (includeState) {
    const refused = checkIncludeState(request.principal)
    if (refused) return refused
  }
  const user = callerOf(context, request)
  const tree = user.tree
  if (parentId !== undefined) {
    const parent = tree.get(parentId)
    if (parent === undefined) return notFound("Folder")
    if (parent.type !== "folder") return validationFailed({ parent_id: ["is not a folder"] })
  }

  const filterKey = JSON.stringify([flatten, parentId ?? null, downloadId ?? null, kind ?? null, updatedAfter ?? null])
  let after: { readonly id: string; readonly updatedAt: number } | undefined
  if (cursor !== undefined) {
    const payload = decodeToken(context.state, `files:${user.id}`, cursor)
    if (payload === undefined || typeof payload.id !== "string" || typeof payload.u !== "number") {
      return validationFailed({ cursor: ["is not a cursor this service issued, or was altered"] })
    }
    if (payload.q !== filterKey) return validationFailed({ cursor: ["was issued for other filters"] })
    after = { id: payload.id, updatedAt: payload.u }
  }

  const matches = (item: Item) =>
    (downloadId === undefined || item.downloadId === downloadId) &&
    (kind === undefined || item.kind === kind) &&
    (updatedAfter === undefined || item.updatedAt > updatedAfter)

  const page =
    updatedAfter === undefined
      ? pageByIdDescending(tree, candidates(tree, flatten, parentId, downloadId), matches, after?.id, limit)
      : pageByUpdatedAt(tree, candidates(tree, flatten, parentId, downloadId), matches, after, updatedAfter, limit)

  const last = page.items.at(-1)
  const includes = {
    media: includeMedia ? ("summary" as const) : ("none" as const),
    poster: includePoster,
    state: includeState
  }
  return ok(
    page.items.map((item) => renderItem(item, recordOptionsFor(context, request, includes, item))),
    {
      next_cursor:
        page.hasMore && last !== undefined
          ? encodeToken(context.state, `files:${user.id}`, { q: filterKey, id: last.id, u: last.updatedAt })
          : null,
      has_more: page.hasMore
    }
  )
}

const getFile = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const query = new QueryReader(request.url.searchParams)
  const includeState = query.bool("include_state")
  const includePoster = query.bool("include_poster")
  const includeMedia = query.bool("include_media")
  if (query.error) return query.error
  if (includeState) {
    const refused = checkIncludeState(request.principal)
    if (refused) return refused
  }
  const item = callerOf(context, request).tree.get(request.params.file ?? "")
  if (item === undefined) return notFound()
  const includes = {
    media: includeMedia ? ("full" as const) : ("none" as const),
    poster: includePoster,
    state: includeState
  }
  return ok(renderItem(item, recordOptionsFor(context, request, includes, item)))
}

const createFolder = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const body = readJsonObject(request)
  if (!body.ok) return body.error
  const { name, parent_id: parentId } = body.value
  const fields: Record<string, Array<string>> = {}
  if (typeof name !== "string") fields.name = ["is required and must be a string"]
  else if (name.trim().length === 0) fields.name = ["must not be empty"]
  if (parentId !== undefined && parentId !== null && (typeof parentId !== "string" || parentId.length === 0)) {
    fields.parent_id = ["must be a folder identifier or null"]
  }
  if (Object.keys(fields).length > 0) return validationFailed(fields)
  const tree = callerOf(context, request).tree
  const parent = typeof parentId === "string" ? parentId : null
  if (parent !== null) {
    const folder = tree.get(parent)
    if (folder === undefined) return notFound("Parent folder")
    if (folder.type !== "folder") return validationFailed({ parent_id: ["is not a folder"] })
  }
  const folderName = typeof name === "string" ? name : ""
  for (const id of tree.childIds(parent)) {
    if (tree.get(id)?.name === folderName) return validationFailed({ name: ["is already used in this folder"] })
  }
  const folder = tree.add({ type: "folder", parentId: parent, name: folderName, kind: "folder", mimeType: "" })
  return ok(renderItem(folder, { media: "none", poster: false, posterBase: context.urls.cdnOrigin }), undefined, 201)
}

const deleteFiles = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const body = readJsonObject(request)
  if (!body.ok) return body.error
  const ids = idList(body.value.ids, MAX_DELETE_IDS)
  if (!ids.ok) return validationFailed({ ids: ids.messages })
  const results = callerOf(context, request).tree.remove(ids.ids)
  return ok(results)
}

/** The order with updated_after: updated_at ascending, ties by id ascending. */
export const byUpdatedThenId = (
  a: { readonly updatedAt: number; readonly id: string },
  b: { readonly updatedAt: number; readonly id: string }
): number => a.updatedAt - b.updatedAt || compareIds(a.id, b.id)

/** The items a listing starts from, before filters. */
const candidates = (
  tree: FileTree,
  flatten: boolean,
  parentId: string | undefined,
  downloadId: string | undefined
): "all" | ReadonlySet<string> => {
  if (flatten) return "all"
  if (parentId !== undefined) return tree.childIds(parentId)
  if (downloadId !== undefined) return tree.downloadItemIds(downloadId)
  return tree.childIds(null)
}

interface Page {
  readonly items: ReadonlyArray<Item>
  readonly hasMore: boolean
}

const pageByIdDescending = (
  tree: FileTree,
  from: "all" | ReadonlySet<string>,
  matches: (item: Item) => boolean,
  afterId: string | undefined,
  limit: number
): Page => {
  // Walk ids downwards from just below the cursor; the whole-tree order is cached.
  const ids = from === "all" ? tree.sortedIds() : [...from].sort(compareIds)
  let index = afterId === undefined ? ids.length - 1 : partitionPoint(ids, (id) => id < afterId) - 1
  const items: Array<Item> = []
  for (; index >= 0; index--) {
    const item = tree.get(ids[index]!)
    if (item === undefined || !matches(item)) continue
    if (items.length === limit) return { items, hasMore: true }
    items.push(item)
  }
  return { items, hasMore: false }
}

const pageByUpdatedAt = (
  tree: FileTree,
  from: "all" | ReadonlySet<string>,
  matches: (item: Item) => boolean,
  after: { readonly id: string; readonly updatedAt: number } | undefined,
  updatedAfter: number,
  limit: number
): Page => {
  if (from === "all") {
    // The whole tree is kept in this order: binary search to the first item after the cursor.
    const ordered = tree.itemsByUpdate()
    const first = partitionPoint(
      ordered,
      (item) => item.updatedAt <= updatedAfter || (after !== undefined && byUpdatedThenId(item, after) <= 0)
    )
    const items: Array<Item> = []
    for (let index = first; index < ordered.length; index++) {
      const item = ordered[index]!
      if (!matches(item)) continue
      if (items.length === limit) return { items, hasMore: true }
      items.push(item)
    }
    return { items, hasMore: false }
  }
  const pool: Array<Item> = []
  const source = [...from].map((id) => tree.get(id))
  for (const item of source) {
    if (item === undefined || !matches(item)) continue
    if (
      after !== undefined &&
      (item.updatedAt < after.updatedAt || (item.updatedAt === after.updatedAt && item.id <= after.id))
    ) {
      continue
    }
    pool.push(item)
  }
  pool.sort(byUpdatedThenId)
  return { items: pool.slice(0, limit), hasMore: pool.length > limit }
}
