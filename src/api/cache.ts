/**
 * Torrent cache availability (POST /cache/check): read-only, spends no credit, reserves
 * nothing. Duplicate hashes are refused before sending, as the spec asks. The answer's
 * shape is not shown, so `data` is returned as JSON.
 */
import { Effect, Schema } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, decodeBody } from "./ApiHttp.ts"
import { checkHashes } from "./requestChecks.ts"
import { Json } from "./schemas/common.ts"

export interface CacheApi {
  check(hashes: ReadonlyArray<string>): Effect.Effect<Json, ApiError>
}

export const makeCacheApi = (http: ApiHttp["Service"]): CacheApi => ({
  check: Effect.fn("CacheApi.check")(function* (hashes) {
    yield* refuseIf("POST /cache/check", checkHashes(hashes))
    const response = yield* http.send({
      method: "POST",
      root: "api",
      path: "/cache/check",
      body: { _tag: "Json", value: { hashes } },
      idempotency: "idempotent"
    })
    return (yield* decodeBody(Schema.Struct({ data: Json }))(response)).data
  })
})
