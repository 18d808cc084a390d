/** The account: plan, credits and effective limits (GET /account). */
import { Effect } from "effect"
import type { ApiError } from "./ApiError.ts"
import { type ApiHttp, decodeBody } from "./ApiHttp.ts"
import { Account } from "./schemas/account.ts"
import { DataEnvelope } from "./schemas/common.ts"

export interface AccountApi {
  readonly get: Effect.Effect<Account, ApiError>
}

export const makeAccountApi = (http: ApiHttp["Service"]): AccountApi => ({
  get: http.send({ method: "GET", root: "api", path: "/account", idempotency: "idempotent" }).pipe(
    Effect.flatMap(decodeBody(DataEnvelope(Account))),
    Effect.map((body) => body.data),
    Effect.withSpan("AccountApi.get")
  )
})
