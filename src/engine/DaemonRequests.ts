/**
 * What the owner asks of the running daemon (the web page: "sync now", "retry", "confirm the
 * held deletion"), delivered to its loop (Daemon.ts), which polls and reconciles at once.
 *
 * - `syncNow`: a poll of the service and a reconcile now (as SIGHUP does). Requests that
 *   arrive while one is pending fold into it (a sliding queue of one): nobody can queue work.
 * - `allowHeldDeletion`: as syncNow, and the next reconcile goes ahead with a deletion the
 *   big-delete gate holds (`run --once --allow-big-delete`); that reconcile takes the
 *   allowance (`takeDeletionAllowance`), so it serves once.
 * Without the live layer (`run --once`, tests) requests go nowhere and none arrives.
 */
import { Context, Effect, Layer, Queue } from "effect"

export interface DaemonRequestsShape {
  readonly syncNow: Effect.Effect<void>
  readonly allowHeldDeletion: Effect.Effect<void>
  /** The daemon's side: waits for the next request. */
  readonly next: Effect.Effect<void>
  /** The daemon's side, as a reconcile starts: whether it may remove a held deletion (once). */
  readonly takeDeletionAllowance: Effect.Effect<boolean>
}

export const DaemonRequests = Context.Reference<DaemonRequestsShape>("dlsync/engine/DaemonRequests", {
  defaultValue: () => ({
    syncNow: Effect.void,
    allowHeldDeletion: Effect.void,
    next: Effect.never,
    takeDeletionAllowance: Effect.succeed(false)
  })
})

/** Requests delivered to whoever waits on `next` in the same graph (the daemon). */
export const daemonRequestsLayer: Layer.Layer<never> = Layer.effect(
  DaemonRequests,
  Effect.map(Queue.sliding<void>(1), (queue) => {
    let deletionAllowed = false
    const syncNow = Effect.asVoid(Queue.offer(queue, undefined))
    return {
      syncNow,
      allowHeldDeletion: Effect.andThen(
        Effect.sync(() => {
          deletionAllowed = true
        }),
        syncNow
      ),
      next: Queue.take(queue),
      takeDeletionAllowance: Effect.sync(() => {
        const allowed = deletionAllowed
        deletionAllowed = false
        return allowed
      })
    }
  })
)
