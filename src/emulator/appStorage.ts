/**
 * Application storage: a key → JSON value namespace per (user, OAuth application), as the
 * spec's "Application storage rules" say.
 *
 * Invariants:
 * - Only OAuth principals reach it (API keys get 403); one (user, client) never sees another's keys.
 * - Any JSON value is stored and returned as sent, including {}, [], null, false, 0 and "".
 * - Each write gets a fresh random strong ETag (a deleted and recreated key never reuses one)
 *   and `version` + 1 (a recreated key starts again at 1).
 * - Limits: 65,536 bytes per encoded value (422 `validation_failed`); 256 keys and 5 MiB of
 *   keys plus encoded values per namespace (413 `storage_quota_exceeded`); the raw body
 *   ceiling is 512 KiB like file state's (the spec gives none for storage; 413).
 * - Choices where the spec is silent: keys are 1–256 UTF-8 bytes without control
 *   characters (422 otherwise); DELETE of a missing key without a condition is 404; PUT
 *   answers 200 whether it created or replaced.
 */
import { encodedBytes, isJsonObject, jsonValueProblem, readJsonBody } from "./appStorageBody.ts"
import { evaluateConditions, nextVersion, type Versioned } from "./appStorageConditions.ts"
import { type EmulatorClock, formatMicros } from "./clock.ts"
import { apiError, type Principal, type RouteRequest, type RouteResult } from "./http.ts"

export const APP_STORAGE_VALUE_LIMIT_BYTES = 65_536
export const APP_STORAGE_MAX_KEYS = 256
export const APP_STORAGE_MAX_BYTES = 5 * 1024 * 1024
export const APP_STORAGE_BODY_LIMIT_BYTES = 512 * 1024

export interface StorageItem extends Versioned {
  readonly key: string
  readonly value: unknown
}

export type StorageRequest = Pick<RouteRequest, "headers" | "body">

export class AppStorage {
  readonly #clock: EmulatorClock
  /** "user\0client" → key → item */
  readonly #spaces = new Map<string, Map<string, StorageItem>>()

  constructor(options: { readonly clock: EmulatorClock }) {
    this.#clock = options.clock
  }

  /** GET /app-storage: every item of the caller's namespace, by key, with `meta.quota`. */
  list(principal: Principal | undefined): RouteResult {
    const space = this.#space(principal)
    if (space === undefined) return FORBIDDEN
    const items = [...space.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    return { kind: "json", status: 200, body: { data: items, meta: { quota: quota(space) } } }
  }

  /** GET /app-storage/{key}. */
  get(principal: Principal | undefined, key: string, request: StorageRequest): RouteResult {
    const space = this.#space(principal)
    if (space === undefined) return FORBIDDEN
    const item = space.get(key)
    if (item === undefined) return NOT_FOUND
    if (evaluateConditions(request.headers, item.etag, "read") === "notModified") {
      return { kind: "empty", status: 304, headers: { etag: item.etag } }
    }
    return { kind: "json", status: 200, body: { data: item }, headers: { etag: item.etag } }
  }

  /** PUT /app-storage/{key}: create or replace, subject to If-Match / If-Match: * / If-None-Match: *. */
  put(principal: Principal | undefined, key: string, request: StorageRequest): RouteResult {
    const space = this.#space(principal)
    if (space === undefined) return FORBIDDEN
    const keyProblem = validateKey(key)
    if (keyProblem !== undefined) return apiError(422, "validation_failed", keyProblem, { key: [keyProblem] })
    const body = readJsonBody(request, APP_STORAGE_BODY_LIMIT_BYTES)
    if (!body.ok) return body.error
    if (!isJsonObject(body.value) || !("value" in body.value)) {
      const message = 'The body must be {"value": <any JSON value>}'
      return apiError(422, "validation_failed", message, { value: [message] })
    }
    const value = body.value.value
    const problem = jsonValueProblem(value, false)
    if (problem !== undefined) return apiError(422, "validation_failed", problem, { value: [problem] })
    const bytes = encodedBytes(value)
    if (bytes > APP_STORAGE_VALUE_LIMIT_BYTES) {
      const message = `value is ${bytes} bytes encoded; the limit is ${APP_STORAGE_VALUE_LIMIT_BYTES}`
      return apiError(422, "validation_failed", message, { value: [message] })
    }
    const current = space.get(key)
    if (evaluateConditions(request.headers, current?.etag, "write") !== "proceed") return PRECONDITION_FAILED
    const used = quota(space)
    const keysAfter = used.keys_used + (current === undefined ? 1 : 0)
    const bytesAfter = used.bytes_used - (current === undefined ? 0 : itemBytes(current)) + keyBytes(key) + bytes
    if (keysAfter > APP_STORAGE_MAX_KEYS || bytesAfter > APP_STORAGE_MAX_BYTES) {
      return apiError(
        413,
        "storage_quota_exceeded",
        `App storage holds at most ${APP_STORAGE_MAX_KEYS} keys and ${APP_STORAGE_MAX_BYTES} bytes per app`
      )
    }
    const at = formatMicros(this.#clock.tick())
    const item: StorageItem = { key, value, ...nextVersion(current, at) }
    space.set(key, item)
    return { kind: "json", status: 200, body: { data: item }, headers: { etag: item.etag } }
  }

  /** DELETE /app-storage/{key}: 204, 412 when If-Match fails, 404 when there is nothing to delete. */
  delete(principal: Principal | undefined, key: string, request: StorageRequest): RouteResult {
    const space = this.#space(principal)
    if (space === undefined) return FORBIDDEN
    const current = space.get(key)
    if (evaluateConditions(request.headers, current?.etag, "write") !== "proceed") return PRECONDITION_FAILED
    if (current === undefined) return NOT_FOUND
    space.delete(key)
    return { kind: "empty", status: 204 }
  }

  #space(principal: Principal | undefined): Map<string, StorageItem> | undefined {
    if (principal?.kind !== "oauth") return undefined
    const id = `${principal.userId}\u0000${principal.clientId}`
    const existing = this.#spaces.get(id)
    if (existing !== undefined) return existing
    const created = new Map<string, StorageItem>()
    this.#spaces.set(id, created)
    return created
  }
}

const FORBIDDEN = apiError(403, "forbidden", "App storage needs an OAuth access token; API keys are not accepted")
const NOT_FOUND = apiError(404, "not_found", "No such app storage key")
const PRECONDITION_FAILED = apiError(
  412,
  "precondition_failed",
  "The item changed or its existence differs: re-read it and retry with its current ETag"
)

const keyBytes = (key: string): number => Buffer.byteLength(key, "utf8")
/** Key plus encoded value bytes, computed once per stored item. */
const sizes = new WeakMap<StorageItem, number>()
const itemBytes = (item: StorageItem): number => {
  const known = sizes.get(item)
  if (known !== undefined) return known
  const bytes = keyBytes(item.key) + encodedBytes(item.value)
  sizes.set(item, bytes)
  return bytes
}

const quota = (space: ReadonlyMap<string, StorageItem>) => {
  let bytes = 0
  for (const item of space.values()) bytes += itemBytes(item)
  return {
    keys_used: space.size,
    keys_limit: APP_STORAGE_MAX_KEYS,
    bytes_used: bytes,
    bytes_limit: APP_STORAGE_MAX_BYTES
  }
}

const validateKey = (key: string): string | undefined => {
  const bytes = keyBytes(key)
  if (bytes < 1 || bytes > 256) return "key must be 1 to 256 UTF-8 bytes"
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the rule rejects
  if (/[\u0000-\u001f\u007f]/.test(key)) return "key must not contain control characters"
  return undefined
}
