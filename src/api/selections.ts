/**
 * Selection stages (GET /download-selections/{selection}, POST …/choices). A choice names
 * an item with `selectable: true` before the selection's `expires_at`; the answer is the
 * next stage (a new selection id) or the accepted download. A choice is never sent twice
 * unless it provably never reached the service.
 */
import { Effect } from "effect"
import { type ApiError, refuseIf } from "./ApiError.ts"
import { type ApiHttp, decodeBody, segment } from "./ApiHttp.ts"
import { checkId, checkNonEmpty, firstProblem } from "./requestChecks.ts"
import { DataEnvelope, type SelectionId } from "./schemas/common.ts"
import { DownloadOutcome, Selection } from "./schemas/downloads.ts"

export interface SelectionsApi {
  get(id: SelectionId): Effect.Effect<Selection, ApiError>
  choose(id: SelectionId, itemId: string): Effect.Effect<DownloadOutcome, ApiError>
}

export const makeSelectionsApi = (http: ApiHttp["Service"]): SelectionsApi => ({
  get: Effect.fn("SelectionsApi.get")(function* (id) {
    yield* refuseIf("GET /download-selections/{selection}", checkId("selection", id))
    const response = yield* http.send({
      method: "GET",
      root: "api",
      path: `/download-selections/${segment(id)}`,
      template: "/download-selections/{selection}",
      idempotency: "idempotent"
    })
    return (yield* decodeBody(DataEnvelope(Selection))(response)).data
  }),
  choose: Effect.fn("SelectionsApi.choose")(function* (id, itemId) {
    yield* refuseIf(
      "POST /download-selections/{selection}/choices",
      firstProblem(checkId("selection", id), checkNonEmpty("item_id", itemId))
    )
    const response = yield* http.send({
      method: "POST",
      root: "api",
      path: `/download-selections/${segment(id)}/choices`,
      template: "/download-selections/{selection}/choices",
      body: { _tag: "Json", value: { item_id: itemId } },
      idempotency: "unsafe"
    })
    return (yield* decodeBody(DataEnvelope(DownloadOutcome))(response)).data
  })
})
