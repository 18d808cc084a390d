/**
 * POST /files/{file}/download-link and POST /files/zip.
 *
 * A download link is `{cdn}/dl/{file id}/{name}?expires={unix s}&sig={hmac}`: it needs no
 * bearer and works until `expires_at`. Refusals: a locked file is 403 `resource_locked`
 * (the spec's "no download link can be obtained", an access restriction, not a state
 * conflict the caller could resolve); a folder is 409 `not_a_file` (use a ZIP); another
 * user's or a deleted id is 404.
 *
 * A ZIP link is `{cdn origin}/zip/{signed id list}/{name}.zip` (or under the base set through
 * the control API, a proxy in front of the CDN origin) with `expires_at` null; the
 * archive is built from the items as they are when it is fetched. Locked content is
 * refused up front (403), as a ZIP of it would be a link to locked bytes.
 */
import { formatMicros } from "../clock.ts"
import type { EmulatorContext } from "../context.ts"
import {
  apiError,
  ok,
  type Route,
  type RouteRequest,
  type RouteResult,
  readJsonObject,
  validationFailed
} from "../http.ts"
import { encodeToken } from "../signedToken.ts"
import { callerOf, idList, notFound } from "./common.ts"

const ANY = { kind: "bearer", apiKey: true, oauthScopes: [] } as const

/** Most ids one ZIP accepts. */
export const MAX_ZIP_IDS = 100

export const linkRoutes = (context: EmulatorContext): ReadonlyArray<Route> => [
  {
    method: "POST",
    path: "/api/v1/files/:file/download-link",
    auth: ANY,
    handle: (request) => downloadLink(context, request)
  },
  { method: "POST", path: "/api/v1/files/zip", auth: ANY, handle: (request) => zipLink(context, request) }
]

/** The message a download link signs. */
export const linkMessage = (fileId: string, expiresSeconds: number): string => `dl\n${fileId}\n${expiresSeconds}`

const downloadLink = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const item = callerOf(context, request).tree.get(request.params.file ?? "")
  if (item === undefined) return notFound("File")
  if (item.type === "folder") return apiError(409, "not_a_file", "Folders have no download link; request a ZIP")
  if (item.locked) return apiError(403, "resource_locked", "The file is locked; no link can be obtained")
  const expires = Math.floor((context.state.clock.nowMs() + context.state.linkTtlMs) / 1000)
  const sig = context.state.sign(linkMessage(item.id, expires))
  const url = `${context.urls.cdn}/dl/${encodeURIComponent(item.id)}/${pathSegment(item.name)}?expires=${expires}&sig=${sig}`
  return ok({ url, expires_at: formatMicros(expires * 1_000_000) })
}

const zipLink = (context: EmulatorContext, request: RouteRequest): RouteResult => {
  const body = readJsonObject(request)
  if (!body.ok) return body.error
  const ids = idList(body.value.ids, MAX_ZIP_IDS)
  if (!ids.ok) return validationFailed({ ids: ids.messages })
  const user = callerOf(context, request)
  for (const id of ids.ids) {
    const item = user.tree.get(id)
    if (item === undefined) return notFound()
    const locked = item.locked || (item.type === "folder" && user.tree.descendants(id).some((child) => child.locked))
    if (locked) return apiError(403, "resource_locked", `${id} is or contains a locked item`)
  }
  const first = user.tree.get(ids.ids[0]!)
  const name = ids.ids.length === 1 && first !== undefined ? first.name : "download"
  const token = encodeToken(context.state, "zip", { u: user.id, ids: ids.ids })
  const origin = context.zip.base ?? context.urls.cdnOrigin
  return ok({ url: `${origin}/zip/${token}/${pathSegment(name)}.zip`, expires_at: null })
}

/**
 * A name as one URL path segment. The segment is cosmetic (the content comes from the id),
 * but "." and ".." — even percent-encoded — are dot segments to URL parsers, which drop or
 * climb them; such names get a neutral segment.
 */
const pathSegment = (name: string): string => (/^(\.|%2e){1,2}$/i.test(name) ? "file" : encodeURIComponent(name))
