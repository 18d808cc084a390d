/**
 * The real API client, with a signal after each app-state or app-storage PUT has its answer:
 * tests wait on these instead of polling the emulator's request log.
 */
import { Effect, Layer, Queue } from "effect"
import { ApiClient } from "../../../src/api/ApiClient.ts"

export interface PutSignals {
  /** One element per answered `state.put` (success or failure). */
  readonly statePuts: Queue.Queue<void>
  /** One element per answered `storage.put`. */
  readonly storagePuts: Queue.Queue<void>
}

export const makePutSignals: Effect.Effect<PutSignals> = Effect.all({
  statePuts: Queue.unbounded<void>(),
  storagePuts: Queue.unbounded<void>()
})

/** Wraps the ApiClient it is given; provide the real client to it. */
export const signallingClient = (signals: PutSignals): Layer.Layer<ApiClient, never, ApiClient> =>
  Layer.effect(
    ApiClient,
    Effect.map(Effect.service(ApiClient), (api) =>
      ApiClient.of({
        ...api,
        state: {
          ...api.state,
          put: (...args) => api.state.put(...args).pipe(Effect.ensuring(Queue.offer(signals.statePuts, undefined)))
        },
        storage: {
          ...api.storage,
          put: (...args) => api.storage.put(...args).pipe(Effect.ensuring(Queue.offer(signals.storagePuts, undefined)))
        }
      })
    )
  )
