/**
 * Per-file application state (GET/PUT/DELETE /files/{file}/state). OAuth only: a personal
 * API key is refused by the service (401/403).
 *
 * Writes take a condition: `{ ifMatch: etag }` (the full quoted ETag, copied whole) to
 * replace a known version, `{ ifNoneMatch: "*" }` to create only. Without one the last
 * write wins, which loses concurrent updates; the app-state writer always passes one.
 * A failed condition is a Precondition reason (412): re-read, merge, retry.
 */
import { Effect, Schema } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, decodeBody, header, segment } from "./ApiHttp.ts"
import { checkId, checkStateValue, firstProblem } from "./requestChecks.ts"
import type { FileId } from "./schemas/common.ts"
import { AppState } from "./schemas/files.ts"

export type WriteCondition = { readonly ifMatch: string } | { readonly ifNoneMatch: "*" }

export interface StateApi {
  /** The state, or null when the resource has none (then there is no ETag either). */
  get(id: FileId): Effect.Effect<AppState | null, ApiError>
  /** Replaces the whole value; returns the stored state (its `etag` is the new validator). */
  put(
    id: FileId,
    value: Readonly<Record<string, unknown>>,
    condition?: WriteCondition
  ): Effect.Effect<AppState, ApiError>
  /** Clears this app's state; succeeds even when there was none. */
  delete(id: FileId, condition?: { readonly ifMatch: string }): Effect.Effect<void, ApiError>
}

// Built once: a decoder is made per schema, and these run once per file and progress write.
const decodeStateOrNull = decodeBody(Schema.Struct({ data: Schema.NullOr(AppState) }))
const decodeState = decodeBody(Schema.Struct({ data: AppState }))

export const makeStateApi = (http: ApiHttp["Service"]): StateApi => ({
  get: Effect.fn("StateApi.get")(function* (id) {
    yield* refuseIf("GET /files/{file}/state", checkId("file", id))
    const response = yield* http.send({
      method: "GET",
      root: "api",
      path: `/files/${segment(id)}/state`,
      template: "/files/{file}/state",
      idempotency: "idempotent"
    })
    return (yield* decodeStateOrNull(response)).data
  }),
  put: Effect.fn("StateApi.put")(function* (id, value, condition) {
    yield* refuseIf(
      "PUT /files/{file}/state",
      firstProblem(checkId("file", id), checkStateValue(value), checkCondition(condition))
    )
    const response = yield* http.send({
      method: "PUT",
      root: "api",
      path: `/files/${segment(id)}/state`,
      template: "/files/{file}/state",
      headers: conditionHeaders(condition),
      body: { _tag: "Json", value: { value } },
      idempotency: "idempotent"
    })
    const state = (yield* decodeState(response)).data
    // The header is the validator of record when both are present.
    const etag = header(response, "etag")
    return etag === undefined ? state : { ...state, etag }
  }),
  delete: Effect.fn("StateApi.delete")(function* (id, condition) {
    yield* refuseIf("DELETE /files/{file}/state", firstProblem(checkId("file", id), checkCondition(condition)))
    yield* http.send({
      method: "DELETE",
      root: "api",
      path: `/files/${segment(id)}/state`,
      template: "/files/{file}/state",
      headers: conditionHeaders(condition),
      idempotency: "idempotent"
    })
  })
})

/** The If-Match / If-None-Match header of a condition. */
export const conditionHeaders = (condition: WriteCondition | undefined): Record<string, string> =>
  condition === undefined ? {} : "ifMatch" in condition ? { "if-match": condition.ifMatch } : { "if-none-match": "*" }

/** An If-Match value must be `*` or a quoted entity tag (strong or weak) as received. */
export const checkCondition = (condition: WriteCondition | undefined) =>
  condition !== undefined && "ifMatch" in condition && !/^(\*|(W\/)?"[^"]*")$/.test(condition.ifMatch)
    ? { field: "If-Match", message: `must be a quoted ETag as received, got ${JSON.stringify(condition.ifMatch)}` }
    : undefined
