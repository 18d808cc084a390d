/**
 * `GET /api/events`: what the web page hears instead of polling, as server-sent events
 * (`text/event-stream`). Each message is `event: <kind>` and one line of JSON in a shape of
 * the status document (`/api/status`), so the page renders both alike:
 *
 *   transfers  status.transfers, each time the daemon publishes them (about once a second
 *              while any file transfers; once more, empty, when the last one ends)
 *   intake     status.intake, when a release changed (looked at every INTAKE_EVERY)
 *   controls   status.daemon.controls, when the owner changed one (pause, bandwidth)
 *   mirror     a mirror event (file_complete, file_failed, deletion_held, release_complete,
 *              release_failed, pass_complete, …) with `at`, as it happens
 *   rate       the next point of the last hour's rate graph (rateHistory.ts)
 *   history    first thing on connecting: the hour's rate graph and the last mirror events
 *
 * Bounds: at most MAX_CLIENTS streams at once (503 beyond). Each client has a queue of
 * CLIENT_QUEUE messages; one that cannot keep up (its socket's buffer full, so its queue
 * fills) is dropped, its connection closed: nothing is buffered for it without bound. A
 * comment line every HEARTBEAT keeps proxies from closing an idle stream and finds dead
 * clients. Everything here is what the status document says: no secret is ever sent.
 */
import { Socket } from "node:net"
import {
  type Cause,
  Clock,
  Context,
  DateTime,
  Effect,
  Layer,
  Option,
  Predicate,
  PubSub,
  Queue,
  Schedule,
  Stream
} from "effect"
import type { HttpServerRequest } from "effect/http"
import { LiveTransfersFeed } from "../engine/liveTransfersPublisher.ts"
import { transfersStatus } from "../engine/transfersStatus.ts"
import type { MirrorEvent } from "../events/MirrorEvent.ts"
import { MirrorEvents } from "../events/MirrorEvents.ts"
import { Intake } from "../intake/Intake.ts"
import { intakeStatus } from "../intake/intakeStatus.ts"
import { ProgressTracker } from "../transfer/ProgressTracker.ts"
import { makeRateHistory, RATE_BUCKET_SECONDS, type RateSample } from "./rateHistory.ts"

/** The most event streams open at once (ten tabs on a few devices). */
export const MAX_CLIENTS = 64

/** Messages a client may be behind by before it is dropped. */
export const CLIENT_QUEUE = 64

export const HEARTBEAT = "20 seconds"

/** How often the releases are looked at for a change while a page listens. */
export const INTAKE_EVERY = "2 seconds"

/** Mirror events kept for a page opened later. */
export const RECENT_MIRROR_EVENTS = 100

/** The most paths a mirror event carries to the page (a big pass changes thousands). */
export const MAX_EVENT_PATHS = 20

export type EventKind = "transfers" | "intake" | "controls" | "mirror" | "rate" | "history"

/**
 * A mirror event as the page gets it: as published, with when (`at`); a list of paths
 * (a pass's changes, a download's files, a held deletion's) cut to MAX_EVENT_PATHS, with
 * its whole length beside it (`…Count`).
 */
export type PageEvent = Readonly<Record<string, unknown>> & { readonly _tag: MirrorEvent["_tag"]; readonly at: string }

export interface EventStreamShape {
  /** The stream of one client, or undefined when MAX_CLIENTS are open. */
  readonly connect: (
    request: HttpServerRequest.HttpServerRequest
  ) => Effect.Effect<Stream.Stream<Uint8Array> | undefined>
  /** Sends `data` to every client as `event: kind`. */
  readonly publish: (kind: EventKind, data: unknown) => Effect.Effect<void>
  /** The last hour of the transfer rate. */
  readonly rateHistory: Effect.Effect<ReadonlyArray<RateSample>>
}

export class EventStream extends Context.Service<EventStream, EventStreamShape>()("dlsync/web/EventStream") {
  static readonly layer: Layer.Layer<EventStream, never, LiveTransfersFeed | ProgressTracker | Intake | MirrorEvents> =
    Layer.effect(
      EventStream,
      Effect.gen(function* () {
        const clients = new Set<Client>()
        const history = makeRateHistory()
        const tracker = yield* ProgressTracker
        const intake = yield* Intake
        const events = yield* MirrorEvents

        const broadcast = (text: string) =>
          Effect.sync(() => {
            for (const client of clients) if (!Queue.offerUnsafe(client.queue, text)) drop(client)
          })
        const publish = (kind: EventKind, data: unknown) =>
          clients.size === 0 ? Effect.void : broadcast(message(kind, data))

        // The transfers as the daemon publishes them, in the status document's shape.
        const feed = yield* (yield* LiveTransfersFeed).subscribe
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.gen(function* () {
              const live = yield* PubSub.take(feed)
              const now = yield* Clock.currentTimeMillis
              yield* publish("transfers", transfersStatus(Option.fromNullishOr(live), process.pid, now))
            })
          )
        )

        // What happens in the mirror, as it happens; the last ones kept for a page opened later.
        const recent: Array<PageEvent> = []
        const mirror = yield* events.subscribe
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.gen(function* () {
              const event = pageEvent(yield* PubSub.take(mirror), DateTime.formatIso(yield* DateTime.now))
              recent.push(event)
              if (recent.length > RECENT_MIRROR_EVENTS) recent.shift()
              yield* publish("mirror", event)
            })
          )
        )

        // The rate of all transfers, every second, into the hour's buckets (kept with or without a page).
        yield* Effect.forkScoped(
          Effect.repeat(
            Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const sample = history.add(now, Math.round(tracker.snapshot(now).overall.rate))
              if (sample !== undefined) yield* publish("rate", sample)
            }),
            Schedule.spaced("1 second")
          )
        )

        // The releases, when one changed, while a page listens.
        let lastIntake = ""
        yield* Effect.forkScoped(
          Effect.repeat(
            Effect.gen(function* () {
              if (clients.size === 0) {
                lastIntake = ""
                return
              }
              const text = message("intake", intakeStatus(yield* intake.list()))
              if (text !== lastIntake) yield* broadcast(text)
              lastIntake = text
            }),
            Schedule.spaced(INTAKE_EVERY)
          )
        )

        yield* Effect.forkScoped(Effect.repeat(broadcast(": heartbeat\n\n"), Schedule.spaced(HEARTBEAT)))

        // Streams end when the server shuts down, before it waits for requests in flight.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const client of clients) Queue.endUnsafe(client.queue)
            clients.clear()
          })
        )

        const connect = (request: HttpServerRequest.HttpServerRequest) =>
          Effect.gen(function* () {
            if (clients.size >= MAX_CLIENTS) return undefined
            const queue = yield* Queue.dropping<string, Cause.Done>(CLIENT_QUEUE)
            const client: Client = { queue, request }
            clients.add(client)
            const past = { bucketSeconds: RATE_BUCKET_SECONDS, samples: history.samples(), events: recent }
            Queue.offerUnsafe(queue, `retry: 3000\n\n${message("history", past)}`)
            return Stream.fromQueue(queue).pipe(
              Stream.encodeText,
              Stream.ensuring(
                Effect.sync(() => {
                  clients.delete(client)
                  Queue.endUnsafe(queue)
                })
              )
            )
          })

        const drop = (client: Client) => {
          clients.delete(client)
          Queue.endUnsafe(client.queue)
          closeConnection(client.request)
        }

        return EventStream.of({ connect, publish, rateHistory: Effect.sync(history.samples) })
      })
    )
}

// ---------------------------------------------------------------------------------------

interface Client {
  readonly queue: Queue.Queue<string, Cause.Done>
  readonly request: HttpServerRequest.HttpServerRequest
}

const pageEvent = (event: MirrorEvent, at: string): PageEvent => {
  switch (event._tag) {
    case "pass_complete":
      return { ...event, changed: event.changed.slice(0, MAX_EVENT_PATHS), changedCount: event.changed.length, at }
    case "download_complete":
    case "deletion_held":
      return { ...event, paths: event.paths.slice(0, MAX_EVENT_PATHS), pathsCount: event.paths.length, at }
    default:
      return { ...event, at }
  }
}

/** One server-sent event; JSON holds no line break, so `data` is one line. */
const message = (kind: EventKind, data: unknown): string => `event: ${kind}\ndata: ${JSON.stringify(data)}\n\n`

/**
 * Closes a client's connection: its stream may be stuck waiting for the socket to drain,
 * where ending its queue reaches nothing; closed, the server ends the response.
 */
const closeConnection = (request: HttpServerRequest.HttpServerRequest): void => {
  const source = request.source
  if (Predicate.hasProperty(source, "socket") && source.socket instanceof Socket) source.socket.destroy()
}
