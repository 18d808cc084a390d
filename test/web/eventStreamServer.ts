/**
 * The event stream (`GET /api/events`, src/web/EventStream.ts) served alone on a free
 * loopback port, and raw socket clients of it, for eventStream.test.ts and
 * bench/webPage.ts: a client that stops reading while `count` messages of `bytes` each go
 * out, and one that reads them all.
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Layer, PubSub } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { LiveTransfersFeed } from "../../src/engine/liveTransfersPublisher.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { serveLocally } from "../../src/server/LocalServer.ts"
import type { LiveTransfers } from "../../src/store/liveTransfers.ts"
import { ProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { EventStream } from "../../src/web/EventStream.ts"
import { waitUntil } from "../integration/harness.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"

const NO_TRANSFERS = Layer.succeed(
  LiveTransfersFeed,
  LiveTransfersFeed.of({ subscribe: Effect.flatMap(PubSub.bounded<LiveTransfers | null>(1), PubSub.subscribe) })
)

export const streamLayer = (dir: string) =>
  EventStream.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        NO_TRANSFERS,
        ProgressTracker.layer,
        Layer.succeed(Intake, makeMemoryIntake(dir).intake),
        MirrorEvents.layer
      )
    )
  )

/** The event stream's route alone, on a free loopback port; its origin. */
export const serveEvents = Effect.gen(function* () {
  const events = yield* EventStream
  const routes = Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      yield* router.add("GET", "/api/events", (request) =>
        Effect.map(events.connect(request), (stream) =>
          stream === undefined
            ? HttpServerResponse.text("too many\n", { status: 503 })
            : HttpServerResponse.stream(stream, { contentType: "text/event-stream" })
        )
      )
    })
  )
  return yield* serveLocally(
    { listen: { host: "127.0.0.1", port: 0 }, setting: "test", name: "event stream", requestTimeoutMs: 30_000 },
    routes
  )
})

/** A client of the stream: what it read, and whether its connection ended. */
export const client = (origin: string) => {
  const url = new URL(origin)
  const socket = Net.connect(Number(url.port), url.hostname)
  const state = { bytes: 0, closed: false, text: "" }
  socket.on("data", (chunk: Buffer) => {
    state.bytes += chunk.length
    if (state.text.length < 4096) state.text += chunk.toString()
  })
  socket.on("close", () => {
    state.closed = true
  })
  socket.on("error", () => undefined)
  socket.write(`GET /api/events HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`)
  return { socket, state }
}

/** Waits (at most 60 s, a bench's 26 MB included) until `condition` holds. */
const until = (condition: () => boolean, what: string) => Effect.promise(() => waitUntil(condition, 60_000, what))

export interface StalledRun {
  /** Messages published, and their bytes. */
  readonly sent: number
  readonly sentBytes: number
  /** What the stalled client got before its connection was closed, once it read again. */
  readonly stalledBytes: number
  /** What the reading client got (every message). */
  readonly readerBytes: number
  /** How long publishing took, and the reader's catching up (ms). */
  readonly millis: number
}

/**
 * Two clients, one of which stops reading after the stream's first message; `count`
 * messages of `bytes`; then the stalled one reads again and finds its connection closed.
 */
export const stalledClientRun = (count: number, bytes: number): Promise<StalledRun> => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-events-"))
  return Effect.runPromise(
    Effect.gen(function* () {
      const events = yield* EventStream
      const origin = yield* serveEvents
      const stalled = client(origin)
      const reading = client(origin)
      // Both streams open (the history arrives first), then one stops reading.
      yield* until(
        () => stalled.state.text.includes("event: history") && reading.state.text.includes("event: history"),
        "both streams open"
      )
      stalled.socket.pause()
      const pad = "x".repeat(bytes)
      const started = performance.now()
      for (let i = 0; i < count; i++) {
        yield* events.publish("controls", { pad })
        // Let the server write what it can and the reader read.
        yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
      }
      yield* until(() => reading.state.bytes >= count * bytes, "the reader's every message")
      const millis = performance.now() - started
      // A paused socket sees the server's close only once it reads what came before.
      stalled.socket.resume()
      yield* until(() => stalled.state.closed, "the stalled client's connection closed")
      reading.socket.destroy()
      return {
        sent: count,
        sentBytes: count * bytes,
        stalledBytes: stalled.state.bytes,
        readerBytes: reading.state.bytes,
        millis
      }
    }).pipe(
      Effect.provide(streamLayer(dir)),
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
    )
  )
}
