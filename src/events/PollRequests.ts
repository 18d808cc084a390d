/**
 * Requests from outside the daemon's own schedule to poll the account now (a verified
 * webhook delivery). A request only wakes a poll of the feed: what changed is still what
 * the feed says, so a request that proves to be about nothing costs one idle poll.
 *
 * Requests that arrive while one is pending fold into it (a sliding queue of one): ten
 * deliveries in a burst are one poll, and a sender can never queue work in the daemon.
 * Only the daemon's graph has it: the webhook receiver and the daemon require it, and
 * `run --once`, which has neither, has no such thing.
 */
import { Context, Effect, Layer, Queue } from "effect"

export interface PollRequestsShape {
  /** Asks for a poll; never waits. */
  readonly request: Effect.Effect<void>
  /** Waits for the next request (the daemon's side). */
  readonly next: Effect.Effect<void>
}

export class PollRequests extends Context.Service<PollRequests, PollRequestsShape>()("dlsync/events/PollRequests") {
  /** Requests delivered to whoever waits on `next` in the same graph (the daemon). */
  static readonly layer: Layer.Layer<PollRequests> = Layer.effect(
    PollRequests,
    Effect.map(Queue.sliding<void>(1), (queue) =>
      PollRequests.of({
        request: Effect.asVoid(Queue.offer(queue, undefined)),
        next: Queue.take(queue)
      })
    )
  )
}
