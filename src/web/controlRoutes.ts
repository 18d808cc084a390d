/**
 * The API routes that steer the daemon (DaemonControl), each a write (WebAccess.write):
 *
 *   POST /api/sync                  poll the service and reconcile now          202 {}
 *   POST /api/transfers/pause       pause every transfer                        200 controls
 *   POST /api/transfers/resume      resume them                                 200 controls
 *   POST /api/bandwidth             { bytesPerSecond: n ≥ 0 | null, until: ISO 8601 | null }:
 *                                   a limit now (0: none) until then or restart;
 *                                   null: back to the configured one           200 controls
 *   POST /api/files/{id}/retry      retry a failed or parked file now           202 {} | 404
 *   POST /api/deletions/confirm     { count, since } of the held deletion seen: it goes ahead
 *                                   (as --allow-big-delete)                     202 {} | 409
 *
 * `controls` is the status document's `daemon.controls`; each change is also sent to every
 * page (EventStream `controls`).
 */
import { Clock, Effect, Schema } from "effect"
import type { HttpRouter } from "effect/http"
import { FileId } from "../domain/FileId.ts"
import type { DaemonControl } from "../engine/DaemonControl.ts"
import { answered, json, jsonBody, pathParam, refuse } from "./apiAnswers.ts"
import type { EventStreamShape } from "./EventStream.ts"
import type { WebAccessShape } from "./WebAccess.ts"

export const BandwidthRequest = Schema.Struct({
  bytesPerSecond: Schema.NullOr(Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))),
  until: Schema.optionalKey(Schema.NullOr(Schema.String))
})

export const ConfirmRequest = Schema.Struct({ count: Schema.Int, since: Schema.String })

export const addControlRoutes = Effect.fnUntraced(function* (
  router: HttpRouter.HttpRouter,
  deps: {
    readonly access: WebAccessShape
    readonly control: DaemonControl["Service"]
    readonly events: EventStreamShape
  }
) {
  const { access, control, events } = deps
  const controlsChanged = Effect.gen(function* () {
    const state = yield* control.state
    yield* events.publish("controls", state)
    return json(state)
  })

  yield* router.add(
    "POST",
    "/api/sync",
    access.write(() => Effect.as(control.syncNow, json({}, 202)))
  )
  yield* router.add(
    "POST",
    "/api/transfers/pause",
    access.write(() => Effect.andThen(control.pauseTransfers, controlsChanged))
  )
  yield* router.add(
    "POST",
    "/api/transfers/resume",
    access.write(() => Effect.andThen(control.resumeTransfers, controlsChanged))
  )
  yield* router.add(
    "POST",
    "/api/bandwidth",
    access.write((request) =>
      answered(
        Effect.gen(function* () {
          const body = yield* jsonBody(request, BandwidthRequest)
          const until = body.until === undefined || body.until === null ? null : Date.parse(body.until)
          if (until !== null && !(until > (yield* Clock.currentTimeMillis))) {
            return yield* refuse(400, "`until` must be a time in the future (ISO 8601)")
          }
          yield* control.limitBandwidth(
            body.bytesPerSecond === null ? null : { bytesPerSecond: body.bytesPerSecond, until }
          )
          return yield* controlsChanged
        })
      )
    )
  )
  yield* router.add(
    "POST",
    "/api/files/:id/retry",
    access.write(() =>
      answered(
        Effect.gen(function* () {
          const id = yield* pathParam("id")
          const outcome = yield* control.retry(FileId.make(id))
          if (outcome === "not failed") return yield* refuse(404, "no failed file with that id")
          return json({}, 202)
        })
      )
    )
  )
  yield* router.add(
    "POST",
    "/api/deletions/confirm",
    access.write((request) =>
      answered(
        Effect.gen(function* () {
          const seen = yield* jsonBody(request, ConfirmRequest)
          const outcome = yield* control.confirmHeldDeletion(seen)
          if (outcome === "nothing held") return yield* refuse(409, "no deletion is held")
          if (outcome === "changed") {
            return yield* refuse(409, "the held deletion changed since you saw it; look at it again")
          }
          return json({}, 202)
        })
      )
    )
  )
})
