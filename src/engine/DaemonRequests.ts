/**
 * What the owner asks of the running daemon (the web page: "sync now", "retry", "confirm the
 * held deletion"), delivered to its loop (Daemon.ts), which polls and reconciles at once.
 *
 * - `syncNow`: a poll of the service and a reconcile now (as SIGHUP does). Requests that
 *   arrive while one is pending fold into it (a sliding queue of one): nobody can queue work.
 * - `allowHeldDeletion`: as syncNow, and the next reconcile goes ahead with a deletion the
 *   big-delete gate holds (`run --once --allow-big-delete`); that reconcile takes the
 *   allowance (`takeDeletionAllowance`), so it serves once.
 * Only the daemon has it (layers/daemon.ts): `run --once` serves no page to ask from.
 */
import { Context, Effect, Layer, Queue, Ref } from "effect"

export interface DaemonRequestsShape {
  readonly syncNow: Effect.Effect<void>
  readonly allowHeldDeletion: Effect.Effect<void>
  /** The daemon's side: waits for the next request. */
  readonly next: Effect.Effect<void>
  /** The daemon's side, as a reconcile starts: whether it may remove a held deletion (once). */
  readonly takeDeletionAllowance: Effect.Effect<boolean>
}

export class DaemonRequests extends Context.Service<DaemonRequests, DaemonRequestsShape>()(
  "dlsync/engine/DaemonRequests"
) {
  /** Requests delivered to whoever waits on `next` in the same graph (the daemon). */
  static readonly layer: Layer.Layer<DaemonRequests> = Layer.effect(
    DaemonRequests,
    Effect.gen(function* () {
      const queue = yield* Queue.sliding<void>(1)
      const deletionAllowed = yield* Ref.make(false)
      const syncNow = Effect.asVoid(Queue.offer(queue, undefined))
      return DaemonRequests.of({
        syncNow,
        allowHeldDeletion: Effect.andThen(Ref.set(deletionAllowed, true), syncNow),
        next: Queue.take(queue),
        takeDeletionAllowance: Ref.getAndSet(deletionAllowed, false)
      })
    })
  )
}
