/** Decoding a JSON response body with its schema into a typed value or a Protocol failure. */
import { Effect, Schema, SchemaIssue } from "effect"
import { ApiError, Protocol } from "./ApiError.ts"
import type { ApiResponse } from "./apiRequest.ts"

/**
 * Decodes a JSON response body with `schema`. A body that is not JSON, or a documented
 * field of the wrong type, fails with a Protocol reason naming the field path and the
 * request id.
 */
export const decodeBody = <S extends Schema.Decoder<unknown>>(schema: S) => {
  // Synchronous (every response schema is): a third faster than decodeUnknownEffect on a 100-record page.
  const decode = Schema.decodeUnknownExit(schema)
  return (response: ApiResponse): Effect.Effect<S["Type"], ApiError> => {
    const protocol = (message: string, field?: string) =>
      new ApiError({
        operation: response.operation,
        reason: new Protocol({
          status: response.status,
          message,
          requestId: response.requestId,
          ...(field !== undefined ? { field } : {})
        })
      })
    let json: unknown
    try {
      json = JSON.parse(response.text)
    } catch {
      return Effect.fail(protocol(response.text === "" ? "expected a JSON body, got none" : "body is not valid JSON"))
    }
    return decode(json).pipe(
      Effect.mapError((e) => {
        const first = formatIssue(e.issue)[0]
        const field = first?.path === undefined || first.path.length === 0 ? undefined : renderPath(first.path)
        const message = truncate(first?.message ?? e.message, 200)
        return protocol(field === undefined ? message : `${field}: ${message}`, field)
      })
    )
  }
}

const formatIssue = (issue: SchemaIssue.Issue) => SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues

/** `["data", 3, "size_bytes"]` → `data[3].size_bytes`. */
const renderPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path
    .map((s) => (typeof s === "object" ? s.key : s))
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("")

const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max)}…`)
