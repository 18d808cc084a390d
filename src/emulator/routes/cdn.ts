/**
 * The CDN origin: download links, ZIP archives and posters. Never reads a bearer (and
 * the request log shows whether one was sent). Every answer is computed from the signed
 * URL alone:
 *
 *   /dl/{file}/{name}?expires&sig   403 link_invalid (bad signature) · 410 link_expired ·
 *                                   404 (deleted) · 403 resource_locked · 200 / 206 / 304 / 416
 *   /zip/{token}/{name}.zip         the archive of the items as they are now (no expiry), stored
 *                                   or deflated as the control API says (zip.ts); no ranges
 *   /posters/{sha256}.webp          content-addressed, immutable
 *
 * A file response is counted while it streams (cdnDownloads.ts) and, when the CDN caps each
 * connection, paced at that rate.
 *
 * Faults: range_ignored answers 200 with the whole file; wrong_range_start answers 206
 * for a range starting one byte off (header and bytes agree, the start is not the one
 * asked for); link_expired answers 410 as if the link had expired.
 */
import { createHash } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { ContentHandle } from "../content.ts"
import type { EmulatorContext } from "../context.ts"
import { BodyWriter, type Fault } from "../faults.ts"
import { apiError, headerValue, type Route, type RouteRequest, type RouteResult } from "../http.ts"
import type { Item } from "../item.ts"
import { ifRangeHolds, noneMatch, parseRange } from "../range.ts"
import { posterBytes, posterHash } from "../records.ts"
import { decodeToken } from "../signedToken.ts"
import { planZip, type ZipEntry } from "../zip.ts"
import { linkMessage } from "./links.ts"

const NONE = { kind: "none" } as const

/** Bytes produced per write; large slices keep the CDN well above 1 GB/s on loopback. */
export const CDN_CHUNK_BYTES = 1024 * 1024

export const cdnRoutes = (context: EmulatorContext): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/dl/:file/:name",
    auth: NONE,
    handle: (request, response) => serveFile(context, request, response)
  },
  {
    method: "GET",
    path: "/zip/:token/:name",
    auth: NONE,
    handle: (request, response) => serveZip(context, request, response)
  },
  { method: "GET", path: "/posters/:poster", auth: NONE, handle: (request) => servePoster(context, request) }
]

/** The strong entity tag of an item's current bytes. */
export const contentEtag = (item: Item): string =>
  `"${createHash("sha256").update(`${item.id}\n${item.contentVersion}\n${item.sizeBytes}`).digest("base64url").slice(0, 22)}"`

const serveFile = async (
  context: EmulatorContext,
  request: RouteRequest,
  response: ServerResponse
): Promise<RouteResult> => {
  const { state } = context
  const fileId = request.params.file ?? ""
  const expires = Number(request.url.searchParams.get("expires") ?? "NaN")
  const sig = request.url.searchParams.get("sig") ?? ""
  if (!Number.isInteger(expires) || !state.verify(linkMessage(fileId, expires), sig)) {
    return apiError(403, "link_invalid", "The link signature is not valid")
  }
  if (request.fault?.kind === "link_expired" || state.clock.nowMs() >= expires * 1000) {
    return apiError(410, "link_expired", "The link has expired; request a new one")
  }
  const found = state.findItem(fileId)
  if (found === undefined || found.item.type !== "file") return apiError(404, "not_found", "File not found")
  const item = found.item
  if (item.locked) return apiError(403, "resource_locked", "The file is locked")

  const handle = await context.content.open(item)
  try {
    const size = handle.size
    const etag = contentEtag(item)
    const lastModified = new Date(Math.floor(item.contentModifiedAt / 1000)).toUTCString()
    const common = {
      ETag: etag,
      "Last-Modified": lastModified,
      "Accept-Ranges": "bytes",
      "Cache-Control": "private, max-age=0",
      "Content-Type": item.mimeType,
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(item.name)}`
    }
    const ifNoneMatch = request.headers["if-none-match"]
    const ifModifiedSince = Date.parse(headerValue(request.headers, "if-modified-since") ?? "")
    if (
      noneMatch(ifNoneMatch, etag) ||
      (ifNoneMatch === undefined && !Number.isNaN(ifModifiedSince) && Date.parse(lastModified) <= ifModifiedSince)
    ) {
      return { kind: "empty", status: 304, headers: { ETag: etag, "Last-Modified": lastModified } }
    }
    let decision = parseRange(request.headers.range, size)
    if (
      request.fault?.kind === "range_ignored" ||
      !ifRangeHolds(headerValue(request.headers, "if-range"), etag, lastModified)
    ) {
      decision = { kind: "full" }
    }
    if (decision.kind === "unsatisfiable") {
      return {
        ...apiError(416, "range_not_satisfiable", "The range is outside the file"),
        headers: { "Content-Range": `bytes */${size}` }
      }
    }
    let start = 0
    let end = size - 1
    let status = 200
    const headers: Record<string, string> = { ...common }
    if (decision.kind === "partial") {
      start = decision.start
      end = decision.end
      if (request.fault?.kind === "wrong_range_start") start = start > 0 ? start - 1 : Math.min(1, end)
      status = 206
      headers["Content-Range"] = `bytes ${start}-${end}/${size}`
    }
    const length = Math.max(0, end - start + 1)
    headers["Content-Length"] = String(length)
    response.writeHead(status, headers)
    if (request.method === "HEAD") {
      response.end()
      return { kind: "raw" }
    }
    const downloads = context.cdnDownloads
    await downloads.during(response, () =>
      streamRange(response, request.fault, length, handle, start, downloads.ratePerConnection ?? undefined)
    )
    return { kind: "raw" }
  } finally {
    await handle.close()
  }
}

const serveZip = async (
  context: EmulatorContext,
  request: RouteRequest,
  response: ServerResponse
): Promise<RouteResult> => {
  const payload = decodeToken(context.state, "zip", request.params.token ?? "")
  const ids = payload?.ids
  const userId = payload?.u
  if (!Array.isArray(ids) || typeof userId !== "string") return apiError(403, "link_invalid", "The link is not valid")
  const user = context.state.user(userId)
  if (user === undefined) return apiError(404, "not_found", "Nothing to archive")
  const entries: Array<{ readonly path: string; readonly item: Item }> = []
  for (const id of ids) {
    const item = typeof id === "string" ? user.tree.get(id) : undefined
    if (item === undefined) continue
    const top = safeName(item.name)
    entries.push({ path: item.type === "folder" ? `${top}/` : top, item })
    if (item.type === "folder") {
      const rootDepth = user.tree.pathOf(item.id).length - 1
      for (const child of user.tree.descendants(item.id)) {
        const path = user.tree.pathOf(child.id).slice(rootDepth).map(safeName).join("/")
        entries.push({ path: child.type === "folder" ? `${path}/` : path, item: child })
      }
    }
  }
  if (entries.length === 0) return apiError(404, "not_found", "Nothing to archive")
  if (entries.some((entry) => entry.item.locked))
    return apiError(403, "resource_locked", "The archive contains a locked item")
  const handles = await Promise.all(
    entries.map((entry) => (entry.item.type === "file" ? context.content.open(entry.item) : undefined))
  )
  try {
    const zipEntries: Array<ZipEntry> = entries.map((entry, index) => {
      const handle = handles[index]
      return {
        name: entry.path,
        size: handle?.size ?? 0,
        modifiedMs: Math.floor(entry.item.contentModifiedAt / 1000),
        ...(handle === undefined ? {} : { read: (offset: number, buffer: Buffer) => handle.read(offset, buffer) })
      }
    })
    const plan = planZip(zipEntries, { method: context.zip.method })
    response.writeHead(200, {
      "Content-Type": "application/zip",
      // A deflated archive's length is known only once written: chunked.
      ...(plan.length === undefined ? {} : { "Content-Length": String(plan.length) }),
      "Cache-Control": "private, max-age=0",
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(request.params.name ?? "download.zip")}`
    })
    if (request.method === "HEAD") {
      response.end()
      return { kind: "raw" }
    }
    const writer = new BodyWriter(response, request.fault, plan.length ?? Number.MAX_SAFE_INTEGER)
    if (await plan.stream((chunk) => writer.write(chunk))) await writer.end()
    return { kind: "raw" }
  } finally {
    await Promise.all(handles.map((handle) => handle?.close()))
  }
}

/** Poster hash → owning item, rebuilt on a miss (a poster URL names bytes, not an item). */
const posterIndexes = new WeakMap<EmulatorContext, Map<string, { readonly userId: string; readonly itemId: string }>>()

const servePoster = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const hash = (request.params.poster ?? "").replace(/\.webp$/, "")
  const lookup = () => {
    const entry = posterIndexes.get(context)?.get(hash)
    const item = entry === undefined ? undefined : context.state.user(entry.userId)?.tree.get(entry.itemId)
    return item?.poster != null && posterHash(item.poster, item.id) === hash ? item : undefined
  }
  let item = lookup()
  if (item === undefined) {
    const index = new Map<string, { readonly userId: string; readonly itemId: string }>()
    for (const user of context.state.users.values()) {
      for (const candidate of user.tree.values()) {
        if (candidate.poster !== null)
          index.set(posterHash(candidate.poster, candidate.id), { userId: user.id, itemId: candidate.id })
      }
    }
    posterIndexes.set(context, index)
    item = lookup()
  }
  if (item?.poster == null) return apiError(404, "not_found", "No such poster")
  return { kind: "bytes", status: 200, body: posterBytes(item.poster, item.id), headers: POSTER_HEADERS }
}

const POSTER_HEADERS = { "Content-Type": "image/webp", "Cache-Control": "public, max-age=31536000, immutable" }

/** Streams `length` bytes of `handle` from `start`, in large slices, under the request's fault or rate cap. */
const streamRange = async (
  response: ServerResponse,
  fault: Fault | undefined,
  length: number,
  handle: ContentHandle,
  start: number,
  ratePerConnection: number | undefined
): Promise<void> => {
  const writer = new BodyWriter(response, fault, length, ratePerConnection)
  for (let offset = 0; offset < length; ) {
    const size = Math.min(CDN_CHUNK_BYTES, length - offset)
    let more: boolean
    if (handle.slices !== undefined) {
      more = await writer.writeMany(handle.slices(start + offset, size))
    } else {
      const buffer = Buffer.allocUnsafe(size)
      await handle.read(start + offset, buffer)
      more = await writer.write(buffer)
    }
    offset += size
    if (!more) return
  }
  await writer.end()
}

/** Archive paths are "/"-separated: a "/" inside a name, "." or ".." would change the tree. */
const safeName = (name: string): string => {
  const replaced = name.replaceAll("/", "_").replaceAll("\\", "_")
  return replaced === "." || replaced === ".." || replaced === "" ? `_${replaced}` : replaced
}
