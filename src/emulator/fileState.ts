/**
 * Per-file application state: one JSON object per (user, OAuth client, resource), as the
 * spec's "File state rules" say.
 *
 * Invariants:
 * - Only OAuth principals reach it (the routes refuse API keys with 403); a caller sees
 *   only its own (user, client) state; another user's or a missing/deleted resource is 404.
 * - `value` is a JSON object without null bytes or non-finite numbers whose UTF-8 JSON
 *   encoding is at most 65,536 bytes (422 `validation_failed` beyond: it is a rule on the
 *   value, while the 512 KiB ceiling on the raw body, which allows for escaping, is 413).
 * - The ETag is random and strong; `version` counts writes from 1; timestamps are the
 *   state's own and never touch the file's `updated_at`.
 * - State is keyed by resource id, so rename and move keep it; `removeResources` (called by
 *   the tree on deletion, expiry and marking, descendants included) drops every app's state.
 * - Every GET/PUT/DELETE counts against 1,200 per minute per (user, app), across tokens.
 */

import { encodedBytes, isJsonObject, jsonValueProblem, readJsonBody, withHeaders } from "./appStorageBody.ts"
import { evaluateConditions, nextVersion, type Versioned } from "./appStorageConditions.ts"
import { type EmulatorClock, formatMicros } from "./clock.ts"
import { apiError, type Principal, type RouteRequest, type RouteResult } from "./http.ts"
import { RateLimiter } from "./oauthRateLimiter.ts"

export const FILE_STATE_VALUE_LIMIT_BYTES = 65_536
export const FILE_STATE_BODY_LIMIT_BYTES = 512 * 1024
export const FILE_STATE_REQUESTS_PER_MINUTE = 1200

/** What file state needs to know about the tree. */
export interface FileAccess {
  /** True when the resource is in the user's account and neither deleted nor marked for deletion. */
  readonly isAccessible: (userId: string, fileId: string) => boolean
}

/** The spec's app_state object. */
export interface AppState extends Versioned {
  readonly value: Readonly<Record<string, unknown>>
}

export type StateRequest = Pick<RouteRequest, "headers" | "body">

export class FileStateStore {
  readonly #clock: EmulatorClock
  readonly #files: FileAccess
  /** resource id → "user\0client" → state */
  readonly #states = new Map<string, Map<string, AppState>>()
  readonly #rate: RateLimiter

  constructor(options: {
    readonly clock: EmulatorClock
    readonly files: FileAccess
    readonly requestsPerMinute?: number
  }) {
    this.#clock = options.clock
    this.#files = options.files
    this.#rate = new RateLimiter(options.requestsPerMinute ?? FILE_STATE_REQUESTS_PER_MINUTE, 60_000)
  }

  /** GET /files/{file}/state. */
  get(principal: Principal | undefined, fileId: string, request: StateRequest): RouteResult {
    const caller = this.#admit(principal, fileId)
    if (caller.error !== undefined) return caller.error
    const state = this.#states.get(fileId)?.get(appKey(caller.userId, caller.clientId))
    if (state === undefined) return { kind: "json", status: 200, body: { data: null } }
    if (evaluateConditions(request.headers, state.etag, "read") === "notModified") {
      return { kind: "empty", status: 304, headers: { etag: state.etag } }
    }
    return { kind: "json", status: 200, body: { data: state }, headers: { etag: state.etag } }
  }

  /** PUT /files/{file}/state: replaces the whole object, subject to If-Match / If-None-Match. */
  put(principal: Principal | undefined, fileId: string, request: StateRequest): RouteResult {
    const caller = this.#admit(principal, fileId)
    if (caller.error !== undefined) return caller.error
    const body = readJsonBody(request, FILE_STATE_BODY_LIMIT_BYTES)
    if (!body.ok) return body.error
    const invalid = validateValue(body.value)
    if (invalid !== undefined) return apiError(422, "validation_failed", invalid, { value: [invalid] })
    const value = isJsonObject(body.value) ? body.value.value : undefined
    if (!isJsonObject(value)) return apiError(422, "validation_failed", "value must be a JSON object")
    const key = appKey(caller.userId, caller.clientId)
    const states = this.#states.get(fileId) ?? new Map<string, AppState>()
    const current = states.get(key)
    const condition = evaluateConditions(request.headers, current?.etag, "write")
    if (condition !== "proceed") return PRECONDITION_FAILED
    const at = formatMicros(this.#clock.tick())
    const next: AppState = { value, ...nextVersion(current, at) }
    states.set(key, next)
    this.#states.set(fileId, states)
    return { kind: "json", status: 200, body: { data: next }, headers: { etag: next.etag } }
  }

  /** DELETE /files/{file}/state: 204 whether or not state existed; If-Match may still fail. */
  delete(principal: Principal | undefined, fileId: string, request: StateRequest): RouteResult {
    const caller = this.#admit(principal, fileId)
    if (caller.error !== undefined) return caller.error
    const key = appKey(caller.userId, caller.clientId)
    const states = this.#states.get(fileId)
    const condition = evaluateConditions(request.headers, states?.get(key)?.etag, "write")
    if (condition !== "proceed") return PRECONDITION_FAILED
    states?.delete(key)
    if (states?.size === 0) this.#states.delete(fileId)
    return { kind: "empty", status: 204 }
  }

  /** The calling app's state on a resource, for `include_state=true` on file listings (null when none). */
  lookup(userId: string, clientId: string, fileId: string): AppState | null {
    return this.#states.get(fileId)?.get(appKey(userId, clientId)) ?? null
  }

  /** Drops every app's state on these resources (the tree passes descendants too). */
  removeResources(fileIds: Iterable<string>): void {
    for (const id of fileIds) this.#states.delete(id)
  }

  #admit(
    principal: Principal | undefined,
    fileId: string
  ):
    | { readonly error: undefined; readonly userId: string; readonly clientId: string }
    | { readonly error: RouteResult } {
    if (principal?.kind !== "oauth") {
      return { error: apiError(403, "forbidden", "File state needs an OAuth access token; API keys are not accepted") }
    }
    const retryAfter = this.#rate.hit(appKey(principal.userId, principal.clientId), this.#clock.nowMs())
    if (retryAfter !== undefined) {
      return {
        error: withHeaders(apiError(429, "rate_limited", "Too many file-state requests for this app"), {
          "retry-after": String(retryAfter)
        })
      }
    }
    if (!this.#files.isAccessible(principal.userId, fileId)) {
      return { error: apiError(404, "not_found", "File or folder not found") }
    }
    return { error: undefined, userId: principal.userId, clientId: principal.clientId }
  }
}

const appKey = (userId: string, clientId: string): string => `${userId}\u0000${clientId}`

const PRECONDITION_FAILED: RouteResult = apiError(
  412,
  "precondition_failed",
  "The state changed: re-read it and retry with its current ETag"
)

/** The reason a PUT body `{value}` is not storable as state, or undefined. */
const validateValue = (body: unknown): string | undefined => {
  if (!isJsonObject(body) || !("value" in body)) return 'The body must be {"value": {…}}'
  const value = body.value
  if (!isJsonObject(value)) return "value must be a JSON object ({} is valid; arrays, scalars and null are not)"
  const problem = jsonValueProblem(value, true)
  if (problem !== undefined) return problem
  const bytes = encodedBytes(value)
  if (bytes > FILE_STATE_VALUE_LIMIT_BYTES) {
    return `value is ${bytes} bytes encoded; the limit is ${FILE_STATE_VALUE_LIMIT_BYTES}`
  }
  return undefined
}
