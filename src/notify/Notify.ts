/**
 * Notifications: each `[[notify]]` target gets the events it asked for (`events`, by default
 * failures and held deletions, not every file) at its `level` or above, batched into one
 * message per burst.
 *
 *   mirror events ─► per target: events ∩ level ─► batchEvents (quiet NOTIFY_QUIET_MS, at most
 *   NOTIFY_MAX_WAIT_MS) ─► notifyMessage ─► sendNotification, retried with the program's backoff
 *
 * Invariants:
 * - A target that is down never blocks nor fails the mirror; it is retried, then given up
 *   with the reason in the log (named by type and host: its URL may be a secret).
 * - A pass with 500 failed files sends one message per target, with the count and the first
 *   few.
 */
import { Effect, Layer, Redacted } from "effect"
import type { NotifySettings } from "../config/afterLandingSettings.ts"
import { notifyTarget } from "../domain/notifyTarget.ts"
import { batchEvents } from "../events/eventBatches.ts"
import { levelOf, type MirrorEvent } from "../events/MirrorEvent.ts"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { retryDelivery } from "../outbound/retryDelivery.ts"
import { atLeast, notifyMessage } from "./notifyMessage.ts"
import { notificationAttempt } from "./sendNotification.ts"

/** A burst ends when nothing new came for this long… */
export const NOTIFY_QUIET_MS = 30_000
/** …or this long after its first event. */
export const NOTIFY_MAX_WAIT_MS = 5 * 60_000

/** Notifies for the scope's life; nothing when no target is configured. */
export const notifyLayer = (targets: ReadonlyArray<NotifySettings>): Layer.Layer<never, never, MirrorEvents> => {
  if (targets.length === 0) return Layer.empty
  const one = (settings: NotifySettings) => {
    const target = notifyTarget(Redacted.value(settings.url), settings.type)
    return batchEvents({
      select: (event: MirrorEvent) =>
        settings.events.some((name) => name === event._tag) && atLeast(levelOf(event), settings.level)
          ? event
          : undefined,
      quietMs: NOTIFY_QUIET_MS,
      maxWaitMs: NOTIFY_MAX_WAIT_MS,
      deliver: (batch) =>
        Effect.gen(function* () {
          const message = notifyMessage(batch)
          const attempt = yield* notificationAttempt(target, settings.secret, batch, message)
          yield* retryDelivery(target.name, "notification", attempt)
        })
    })
  }
  return Layer.effectDiscard(Effect.forEach(targets, one, { discard: true })).pipe(Layer.provide(Outbound.layer))
}
