/**
 * The event source: a typed stream of what happened in the mirror (MirrorEvent.ts), one
 * publisher side for the engine and any number of subscribers (media refresh, hooks,
 * notifications, the intake).
 *
 *   recordDownload · executor · MirrorPass ─► publish ─► PubSub (dropping, EVENT_CAPACITY)
 *                                                          ├─► subscriber ─► …
 *                                                          └─► subscriber ─► …
 *
 * Invariants:
 * - Publishing never blocks nor fails the mirror: the PubSub is bounded and drops what a
 *   subscriber too slow to keep up has no room for; the drops are counted and logged.
 * - The engine requires the event source (layers/engine.ts provides it to every command that
 *   mirrors); publishing needs no subscriber.
 * - A subscriber sees what was published after it subscribed: consumers subscribe when their
 *   layer is built, before the first pass.
 */
import { Context, Effect, Layer, PubSub, type Scope } from "effect"
import type { MirrorEvent } from "./MirrorEvent.ts"

/** Events a subscriber may be behind by before new ones are dropped. */
export const EVENT_CAPACITY = 4096

/** Drops are logged at the first and then every this many. */
const DROP_LOG_EVERY = 1000

export interface MirrorEventsShape {
  readonly publish: (event: MirrorEvent) => Effect.Effect<void>
  /** A subscription for the scope's life. */
  readonly subscribe: Effect.Effect<PubSub.Subscription<MirrorEvent>, never, Scope.Scope>
}

export class MirrorEvents extends Context.Service<MirrorEvents, MirrorEventsShape>()("dlsync/events/MirrorEvents") {
  /** The live event source, for the engine's life. */
  static readonly layer: Layer.Layer<MirrorEvents> = Layer.effect(
    MirrorEvents,
    Effect.gen(function* () {
      const pubsub = yield* Effect.acquireRelease(PubSub.dropping<MirrorEvent>(EVENT_CAPACITY), PubSub.shutdown)
      let dropped = 0
      return MirrorEvents.of({
        publish: (event) =>
          Effect.flatMap(PubSub.publish(pubsub, event), (accepted) => {
            if (accepted) return Effect.void
            dropped += 1
            return dropped % DROP_LOG_EVERY === 1
              ? Effect.logWarning(`events: ${dropped} dropped so far (a hook, notification or refresh is behind)`)
              : Effect.void
          }),
        subscribe: PubSub.subscribe(pubsub)
      })
    })
  )
}

/** Publishes one event to the engine's event source. */
export const publishEvent = (event: MirrorEvent): Effect.Effect<void, never, MirrorEvents> =>
  MirrorEvents.use((events) => events.publish(event))
