/**
 * JSON request bodies and values for the API routes of file state, app storage and
 * downloads: content type (415), raw size (413), syntax (400), then the caller validates.
 */
import { apiError, type RouteRequest, type RouteResult } from "./http.ts"

export type JsonBody =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: RouteResult }

/** Reads a JSON body of at most `maxBytes` raw bytes sent as `application/json`. */
export const readJsonBody = (request: Pick<RouteRequest, "headers" | "body">, maxBytes: number): JsonBody => {
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
  if (type !== "application/json") {
    return { ok: false, error: apiError(415, "unsupported_media_type", "Content-Type must be application/json") }
  }
  if (request.body.length > maxBytes) {
    return { ok: false, error: apiError(413, "payload_too_large", `The request body exceeds ${maxBytes} bytes`) }
  }
  try {
    return { ok: true, value: JSON.parse(request.body.toString("utf8")) }
  } catch {
    return { ok: false, error: apiError(400, "invalid_json", "The request body is not valid JSON") }
  }
}

/** An error result with extra headers (Retry-After, ETag…). */
export const withHeaders = (result: RouteResult, headers: Readonly<Record<string, string>>): RouteResult =>
  result.kind === "raw" ? result : { ...result, headers: { ...result.headers, ...headers } }

/** A plain JSON object (not an array, not null). */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Bytes of the value's UTF-8 JSON encoding: what the per-value limits measure. */
export const encodedBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

/**
 * The first problem that makes a parsed value unstorable, or undefined: non-finite numbers
 * (JSON.parse turns `1e999` into Infinity) and, when `rejectNul`, U+0000 in strings or keys.
 */
export const jsonValueProblem = (value: unknown, rejectNul: boolean): string | undefined => {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : "Numbers must be finite"
  if (typeof value === "string") return rejectNul && value.includes("\u0000") ? "Null bytes are not allowed" : undefined
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonValueProblem(item, rejectNul)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  if (isJsonObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (rejectNul && key.includes("\u0000")) return "Null bytes are not allowed"
      const problem = jsonValueProblem(item, rejectNul)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}
