/**
 * Checks a request must pass before it is sent. Pure: each returns the problem (the
 * parameter at fault and why) or undefined. The service would refuse these anyway; saying
 * so locally names the parameter and spends no request, credit or rate budget.
 */
import { webhookUrlProblem } from "../domain/webhookUrl.ts"

export interface Problem {
  readonly field: string
  readonly message: string
}

/** Page size bounds of GET /files and GET /files/changes. */
export const FILES_PAGE_MAX = 100
export const CHANGES_PAGE_MAX = 100
/** Encoded size limit of an app_state value and of an app-storage value (64 KiB). */
export const VALUE_MAX_BYTES = 65_536
/** `code_verifier` rule of the token endpoint (RFC 7636). */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/

/** An integer page size within [1, max]. */
export const checkLimit = (limit: number | undefined, max: number): Problem | undefined =>
  limit === undefined || (Number.isInteger(limit) && limit >= 1 && limit <= max)
    ? undefined
    : { field: "limit", message: `must be an integer from 1 to ${max}, got ${limit}` }

/** An identifier used in a path or filter: a non-empty string. */
export const checkId = (field: string, id: string | undefined): Problem | undefined =>
  id === undefined || id.length > 0 ? undefined : { field, message: "must not be empty" }

/** `flatten=true` lists every level; combined with a non-empty `parent_id` the service answers 422. */
export const checkFlatten = (flatten: boolean | undefined, parentId: string | undefined): Problem | undefined =>
  flatten === true && parentId !== undefined && parentId !== ""
    ? { field: "flatten", message: "cannot be combined with a non-empty parent_id" }
    : undefined

/** `updated_after` must be a full RFC 3339 timestamp with a time zone. */
export const checkTimestamp = (field: string, value: string | undefined): Problem | undefined =>
  value === undefined ||
  (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)))
    ? undefined
    : { field, message: `must be an RFC 3339 timestamp with a time zone, got ${JSON.stringify(value)}` }

/** Kind filters: at least one, each non-empty and without a comma (they travel comma-joined). */
export const checkKinds = (kinds: ReadonlyArray<string> | undefined): Problem | undefined => {
  if (kinds === undefined) return undefined
  if (kinds.length === 0) return { field: "kind", message: "must name at least one kind when given" }
  const bad = kinds.findIndex((k) => k === "" || k.includes(","))
  return bad === -1 ? undefined : { field: `kind[${bad}]`, message: "must be a non-empty kind without commas" }
}

/** A non-empty list of non-empty identifiers without duplicates. */
export const checkIdList = (field: string, ids: ReadonlyArray<string>): Problem | undefined => {
  if (ids.length === 0) return { field, message: "must contain at least one identifier" }
  return firstEmptyOrDuplicate(field, ids, (s) => s)
}

/** Cache-check hashes: non-empty, none empty, no duplicates (hex hashes compare case-insensitively). */
export const checkHashes = (hashes: ReadonlyArray<string>): Problem | undefined => {
  if (hashes.length === 0) return { field: "hashes", message: "must contain at least one hash" }
  return firstEmptyOrDuplicate("hashes", hashes, (s) => s.trim().toLowerCase())
}

/**
 * An app_state value: a plain JSON object (`{}` is fine; arrays, scalars and null are not),
 * JSON all the way down (no NaN, Infinity, undefined, functions or class instances), no
 * NUL character, and at most 64 KiB once encoded as UTF-8.
 */
export const checkStateValue = (value: unknown): Problem | undefined => {
  if (!isPlainObject(value)) return { field: "value", message: `must be a JSON object, got ${describe(value)}` }
  return checkJsonValue(value)
}

/** An app-storage value: any JSON value (null, false, 0, "", [] and {} included), at most 64 KiB encoded. */
export const checkJsonValue = (value: unknown): Problem | undefined => {
  const bad = findNonJson(value, "value")
  if (bad !== undefined) return bad
  const bytes = Buffer.byteLength(JSON.stringify(value), "utf8")
  return bytes <= VALUE_MAX_BYTES
    ? undefined
    : { field: "value", message: `encodes to ${bytes} bytes, more than the ${VALUE_MAX_BYTES}-byte limit` }
}

/** A PKCE code_verifier: 43 to 128 characters of [A-Za-z0-9._~-]. */
export const checkCodeVerifier = (verifier: string): Problem | undefined =>
  CODE_VERIFIER_PATTERN.test(verifier)
    ? undefined
    : {
        field: "code_verifier",
        message: `must be 43 to 128 characters of A-Z a-z 0-9 . _ ~ -, got ${verifier.length} characters`
      }

/** An OAuth client_id: a UUID. */
export const checkClientId = (clientId: string): Problem | undefined =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(clientId)
    ? undefined
    : { field: "client_id", message: "must be a UUID" }

/** A webhook receiver: the spec's `webhook_url` rule (domain/webhookUrl.ts). */
export const checkWebhookUrl = (url: string | undefined): Problem | undefined => {
  const message = url === undefined ? undefined : webhookUrlProblem(url)
  return message === undefined ? undefined : { field: "webhook_url", message }
}

/** A non-empty string parameter. */
export const checkNonEmpty = (field: string, value: string | undefined): Problem | undefined =>
  value === undefined || value.trim().length > 0 ? undefined : { field, message: "must not be empty" }

/** The first problem of several, in order. */
export const firstProblem = (...problems: ReadonlyArray<Problem | undefined>): Problem | undefined =>
  problems.find((p) => p !== undefined)

// ---------------------------------------------------------------------------------------

const firstEmptyOrDuplicate = (
  field: string,
  values: ReadonlyArray<string>,
  key: (s: string) => string
): Problem | undefined => {
  const seen = new Map<string, number>()
  for (const [i, v] of values.entries()) {
    const k = key(v)
    if (k === "") return { field: `${field}[${i}]`, message: "must not be empty" }
    const earlier = seen.get(k)
    if (earlier !== undefined) return { field: `${field}[${i}]`, message: `duplicates ${field}[${earlier}] (${v})` }
    seen.set(k, i)
  }
  return undefined
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

const describe = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`)

/** The first place where `value` is not plain JSON, or carries a NUL character. */
const findNonJson = (value: unknown, path: string, depth = 0): Problem | undefined => {
  if (depth > 200) return { field: path, message: "is nested too deeply" }
  if (value === null || typeof value === "boolean") return undefined
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : { field: path, message: `must be a finite number, got ${value}` }
  }
  if (typeof value === "string") {
    return value.includes("\u0000") ? { field: path, message: "must not contain a NUL character" } : undefined
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const bad = findNonJson(item, `${path}[${i}]`, depth + 1)
      if (bad !== undefined) return bad
    }
    return undefined
  }
  if (isPlainObject(value)) {
    for (const [k, item] of Object.entries(value)) {
      if (k.includes("\u0000")) return { field: path, message: "must not have a key with a NUL character" }
      const bad = findNonJson(item, `${path}.${k}`, depth + 1)
      if (bad !== undefined) return bad
    }
    return undefined
  }
  return { field: path, message: `must be JSON, got ${describe(value)}` }
}
