/**
 * Application storage (GET /app-storage, GET/PUT/DELETE /app-storage/{key}). OAuth only.
 * Values are any JSON (null, false, 0, "", [] and {} are kept as such); each item has an
 * ETag (from the response header) for conditional writes. Conditions as in state.ts,
 * plus `{ ifMatch: "*" }` (the key must exist).
 */
import { Effect, Schema } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, type ApiResponse, decodeBody, header, segment } from "./ApiHttp.ts"
import { checkJsonValue, checkNonEmpty, firstProblem } from "./requestChecks.ts"
import type { Json } from "./schemas/common.ts"
import { StorageItem, StorageList } from "./schemas/storage.ts"
import { checkCondition, conditionHeaders, type WriteCondition } from "./state.ts"

export interface StoredItem {
  readonly item: StorageItem
  /** The item's strong ETag: the ETag header, else an `etag` field of the body; undefined when neither. */
  readonly etag: string | undefined
}

export interface StorageApi {
  list(): Effect.Effect<StorageList, ApiError>
  get(key: string): Effect.Effect<StoredItem, ApiError>
  put(key: string, value: Json, condition?: WriteCondition): Effect.Effect<StoredItem, ApiError>
  delete(key: string, condition?: { readonly ifMatch: string }): Effect.Effect<void, ApiError>
}

export const makeStorageApi = (http: ApiHttp["Service"]): StorageApi => {
  const itemPath = (key: string) => ({ path: `/app-storage/${segment(key)}`, template: "/app-storage/{key}" })
  return {
    list: Effect.fn("StorageApi.list")(function* () {
      const response = yield* http.send({ method: "GET", root: "api", path: "/app-storage", idempotency: "idempotent" })
      return yield* decodeBody(StorageList)(response)
    }),
    get: Effect.fn("StorageApi.get")(function* (key) {
      yield* refuseIf("GET /app-storage/{key}", checkNonEmpty("key", key))
      const response = yield* http.send({ method: "GET", root: "api", ...itemPath(key), idempotency: "idempotent" })
      const item = (yield* decodeBody(Schema.Struct({ data: StorageItem }))(response)).data
      return { item, etag: etagOf(response, item) }
    }),
    put: Effect.fn("StorageApi.put")(function* (key, value, condition) {
      yield* refuseIf(
        "PUT /app-storage/{key}",
        firstProblem(checkNonEmpty("key", key), checkJsonValue(value), checkCondition(condition))
      )
      const response = yield* http.send({
        method: "PUT",
        root: "api",
        ...itemPath(key),
        headers: conditionHeaders(condition),
        body: { _tag: "Json", value: { value } },
        idempotency: "idempotent"
      })
      const item = (yield* decodeBody(Schema.Struct({ data: StorageItem }))(response)).data
      return { item, etag: etagOf(response, item) }
    }),
    delete: Effect.fn("StorageApi.delete")(function* (key, condition) {
      yield* refuseIf("DELETE /app-storage/{key}", firstProblem(checkNonEmpty("key", key), checkCondition(condition)))
      yield* http.send({
        method: "DELETE",
        root: "api",
        ...itemPath(key),
        headers: conditionHeaders(condition),
        idempotency: "idempotent"
      })
    })
  }
}

// ---------------------------------------------------------------------------------------

const etagOf = (response: ApiResponse, item: StorageItem): string | undefined =>
  header(response, "etag") ?? (typeof item.etag === "string" ? item.etag : undefined)
