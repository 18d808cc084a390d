/**
 * Requests from outside the daemon's own schedule to poll the account now (a verified
 * webhook delivery). A request only wakes a poll of the feed: what changed is still what
 * the feed says, so a request that proves to be about nothing costs one idle poll.
 *
 * Requests that arrive while one is pending fold into it (a sliding queue of one): ten
 * deliveries in a burst are one poll, and a sender can never queue work in the daemon.
 * Without the layer (`run --once`, tests) requests go nowhere and none ever arrives.
 */
import { Context, Effect, Layer, Queue } from "effect"

export interface PollRequestsShape {
  /** Asks for a poll; never waits. */
  readonly request: Effect.Effect<void>
  /** Waits for the next request (the daemon's side). */
  readonly next: Effect.Effect<void>
}

export const PollRequests = Context.Reference<PollRequestsShape>("dlsync/events/PollRequests", {
  defaultValue: () => ({ request: Effect.void, next: Effect.never })
})

/** Requests delivered to whoever waits on `next` in the same graph (the daemon). */
export const pollRequestsLayer: Layer.Layer<never> = Layer.effect(
  PollRequests,
  Effect.map(Queue.sliding<void>(1), (queue) => ({
    request: Effect.asVoid(Queue.offer(queue, undefined)),
    next: Queue.take(queue)
  }))
)
