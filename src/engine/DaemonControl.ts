/**
 * What the owner can steer in the running daemon (the web page's buttons), in one place:
 * sync now, retry a failed file now, confirm the held big deletion, pause and resume every
 * transfer, and a bandwidth limit now. The daemon layer provides it; each control is the
 * engine's own (DaemonRequests, TransferPause, RuntimeBandwidth), checked against the store.
 *
 * - retry: a file the last pass left failed (a failed download, a parked one, or one it
 *   could not place) is retried by the next reconcile, which starts now; any other id is
 *   NotFailed.
 * - confirm: only the held deletion the owner saw (its count and since when it is held)
 *   goes ahead, with the effect of `run --once --allow-big-delete` on the next reconcile; a
 *   deletion held since then, or none, is refused. Deletions go to the trash, as always.
 * - pause, resume and the bandwidth limit last until changed or until the process ends.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { FileId } from "../domain/FileId.ts"
import { Store } from "../store/Store.ts"
import { DaemonRequests } from "./DaemonRequests.ts"
import { type BandwidthLimitNow, RuntimeBandwidth } from "./runtimeBandwidth.ts"
import { TransferPause } from "./transferPause.ts"

export interface ControlState {
  readonly transfersPaused: boolean
  readonly bandwidth: {
    /** The limit in force now, bytes per second (0 = none). */
    readonly limit: number
    /** The limit set now, while in force; null when the configured one applies. */
    readonly setNow: { readonly bytesPerSecond: number; readonly until: number | null } | null
    /** The configured limit in force now (the schedule's), bytes per second (0 = none). */
    readonly configured: number
  }
}

/** The held deletion the owner confirms, as it was shown to them. */
export interface HeldDeletionSeen {
  readonly count: number
  /** When it was first held (the status document's `heldDelete.since`). */
  readonly since: string
}

export type ConfirmOutcome = "confirmed" | "nothing held" | "changed"

export type RetryOutcome = "retrying" | "not failed"

export class DaemonControl extends Context.Service<
  DaemonControl,
  {
    readonly syncNow: Effect.Effect<void>
    readonly retry: (remoteId: FileId) => Effect.Effect<RetryOutcome>
    readonly confirmHeldDeletion: (seen: HeldDeletionSeen) => Effect.Effect<ConfirmOutcome>
    readonly pauseTransfers: Effect.Effect<void>
    readonly resumeTransfers: Effect.Effect<void>
    /** null: back to the configured limit. */
    readonly limitBandwidth: (limit: BandwidthLimitNow | null) => Effect.Effect<void>
    readonly state: Effect.Effect<ControlState>
  }
>()("dlsync/engine/DaemonControl") {
  static readonly layer: Layer.Layer<DaemonControl, never, Store | TransferPause | RuntimeBandwidth | DaemonRequests> =
    Layer.effect(
      DaemonControl,
      Effect.gen(function* () {
        const store = yield* Store
        const pause = yield* TransferPause
        const bandwidth = yield* RuntimeBandwidth
        const requests = yield* DaemonRequests

        const retry = Effect.fn("DaemonControl.retry")(function* (remoteId: FileId) {
          const entry = yield* store.local.byRemoteId(remoteId)
          const failedEntry = Option.isSome(entry) && entry.value.state === "failed"
          const failedInPass = (yield* store.passFailures.list).some((f) => f.remoteId === remoteId)
          if (!failedEntry && !failedInPass) return "not failed" as const
          yield* Effect.logInfo(`retrying ${Option.isSome(entry) ? entry.value.path : remoteId} now, as asked`)
          yield* requests.syncNow
          return "retrying" as const
        })

        const confirmHeldDeletion = Effect.fn("DaemonControl.confirmHeldDeletion")(function* (seen: HeldDeletionSeen) {
          const held = yield* store.held.list
          if (held.length === 0) return "nothing held" as const
          if (held.length !== seen.count || held[0]?.heldAt !== seen.since) return "changed" as const
          yield* Effect.logWarning(`the held deletion of ${held.length} file(s) goes ahead, as confirmed`)
          yield* requests.allowHeldDeletion
          return "confirmed" as const
        })

        const state = Effect.gen(function* () {
          const setNow = yield* bandwidth.current
          const configured = yield* bandwidth.configured
          return {
            transfersPaused: yield* pause.paused,
            bandwidth: { limit: setNow?.bytesPerSecond ?? configured, setNow, configured }
          } satisfies ControlState
        })

        return DaemonControl.of({
          syncNow: Effect.andThen(Effect.logInfo("sync now, as asked"), requests.syncNow),
          retry,
          confirmHeldDeletion,
          pauseTransfers: Effect.andThen(pause.pause, Effect.logInfo("transfers paused, as asked")),
          resumeTransfers: Effect.andThen(pause.resume, Effect.logInfo("transfers resumed, as asked")),
          limitBandwidth: (limit) => Effect.andThen(bandwidth.set(limit), Effect.logInfo(describeLimit(limit))),
          state
        })
      })
    )
}

const describeLimit = (limit: BandwidthLimitNow | null): string => {
  if (limit === null) return "bandwidth: back to the configured limit, as asked"
  const rate = limit.bytesPerSecond === 0 ? "no limit" : `${limit.bytesPerSecond} bytes/s`
  const until = limit.until === null ? "until restart" : `until ${new Date(limit.until).toISOString()}`
  return `bandwidth: ${rate} ${until}, as asked`
}
