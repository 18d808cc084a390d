/** Helpers shared by the API routes of the core areas. */

import type { EmulatorContext } from "../context.ts"
import type { Principal, RouteRequest, RouteResult } from "../http.ts"
import { apiError } from "../http.ts"
import type { Item } from "../item.ts"
import type { RecordOptions } from "../records.ts"
import type { User } from "../state.ts"

/** The calling user (routes with a bearer rule always have one). */
export const callerOf = (context: EmulatorContext, request: RouteRequest): User => {
  const principal = request.principal
  if (principal === undefined) throw new Error("route without a principal")
  const user = context.state.user(principal.userId)
  if (user === undefined) throw new Error(`unknown user ${principal.userId}`)
  return user
}

/**
 * `include_state=true` needs an OAuth token with files:read and storage:read: a personal
 * API key gets 403 forbidden, a token without the scopes 403 insufficient_scope.
 */
export const checkIncludeState = (principal: Principal | undefined): RouteResult | undefined => {
  if (principal?.kind !== "oauth") {
    return apiError(403, "forbidden", "include_state needs an OAuth token with files:read and storage:read")
  }
  if (!principal.scopes.has("files:read") || !principal.scopes.has("storage:read")) {
    return apiError(403, "insufficient_scope", "include_state needs the scopes files:read and storage:read")
  }
  return undefined
}

export const recordOptionsFor = (
  context: EmulatorContext,
  request: RouteRequest,
  includes: { readonly media: RecordOptions["media"]; readonly poster: boolean; readonly state: boolean },
  item: Item
): RecordOptions => ({
  media: includes.media,
  poster: includes.poster,
  posterBase: context.urls.cdnOrigin,
  ...(includes.state && request.principal !== undefined
    ? { appState: context.state.appStateLookup(request.principal, request.principal.userId, item.id) ?? null }
    : {})
})

export const notFound = (what = "File or folder"): RouteResult => apiError(404, "not_found", `${what} not found`)

/** An array of 1..max distinct non-empty strings under `field`, or the 422 messages. */
export const idList = (
  value: unknown,
  max: number
):
  | { readonly ok: true; readonly ids: ReadonlyArray<string> }
  | { readonly ok: false; readonly messages: Array<string> } => {
  if (!Array.isArray(value)) return { ok: false, messages: ["must be an array of identifiers"] }
  const messages: Array<string> = []
  if (value.length === 0) messages.push("must not be empty")
  if (value.length > max) messages.push(`must hold at most ${max} identifiers`)
  const ids: Array<string> = []
  for (const entry of value) {
    if (typeof entry !== "string" || entry.length === 0) {
      messages.push("every identifier must be a non-empty string")
      break
    }
    ids.push(entry)
  }
  if (new Set(ids).size !== ids.length) messages.push("must not repeat an identifier")
  return messages.length === 0 ? { ok: true, ids } : { ok: false, messages }
}
