/** A `[[notify]]` target as the configuration gives it, and the notifier over a fresh event source for one body. */
import { Effect, Layer, Logger, Redacted } from "effect"
import { NOTIFY_EVENTS_DEFAULT, type NotifySettings } from "../../src/config/afterLandingSettings.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { notifyLayer } from "../../src/notify/Notify.ts"

export const target = (url: string, extra: Partial<NotifySettings> = {}): NotifySettings => ({
  url: Redacted.make(url),
  events: NOTIFY_EVENTS_DEFAULT,
  level: "info",
  secret: null,
  ...extra
})

/** Runs `body` with the notifier, then closes it (which sends what is owed); log lines go to `logs`. */
export const withNotify = (
  targets: ReadonlyArray<NotifySettings>,
  body: Effect.Effect<void, never, MirrorEvents>,
  logs: Array<string> = []
) =>
  Effect.scoped(
    Effect.provide(body, Layer.fresh(notifyLayer(targets).pipe(Layer.provideMerge(MirrorEvents.layer))))
  ).pipe(Effect.provide(Logger.layer([Logger.make((o) => logs.push(Logger.formatLogFmt.log(o)))])))
