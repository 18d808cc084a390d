/**
 * The event stream (`GET /api/events`, src/web/EventStream.ts) over a real HTTP server on
 * 127.0.0.1: a client that stops reading is dropped, its connection closed, once its socket
 * and its queue are full, never buffered for without bound; a client that reads gets every
 * message meanwhile. Messages of 64 KiB fill the buffers in a few megabytes.
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, PubSub } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { LiveTransfersFeed } from "../../src/engine/liveTransfersPublisher.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { serveLocally } from "../../src/server/LocalServer.ts"
import type { LiveTransfers } from "../../src/store/liveTransfers.ts"
import { ProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { CLIENT_QUEUE, EventStream } from "../../src/web/EventStream.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"

const NO_TRANSFERS = Layer.succeed(
  LiveTransfersFeed,
  LiveTransfersFeed.of({ subscribe: Effect.flatMap(PubSub.bounded<LiveTransfers | null>(1), PubSub.subscribe) })
)

const streamLayer = (dir: string) =>
  EventStream.layer.pipe(
    Layer.provide(
      Layer.mergeAll(NO_TRANSFERS, ProgressTracker.layer, Layer.succeed(Intake, makeMemoryIntake(dir).intake))
    )
  )

/** The event stream's route alone, on a free loopback port; its origin. */
const serveEvents = Effect.gen(function* () {
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
const client = (origin: string) => {
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

const until = (condition: () => boolean) =>
  Effect.promise(async () => {
    while (!condition()) await new Promise((r) => setTimeout(r, 10))
  })

describe("the event stream", () => {
  it.live(
    "drops a client that stops reading, and keeps sending to one that reads",
    () => {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-events-"))
      return Effect.gen(function* () {
        const events = yield* EventStream
        const origin = yield* serveEvents
        const stalled = client(origin)
        const reading = client(origin)
        // Both streams open (the history arrives first), then one stops reading.
        yield* until(
          () => stalled.state.text.includes("event: history") && reading.state.text.includes("event: history")
        )
        stalled.socket.pause()

        const big = "x".repeat(64 * 1024)
        // 25 MiB: more than the socket buffers (a few MiB) and CLIENT_QUEUE messages hold.
        const sent = 400
        for (let i = 0; i < sent; i++) {
          yield* events.publish("controls", { pad: big })
          // Let the server write what it can and the reader read.
          yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
        }
        // The one that reads got them all.
        yield* until(() => reading.state.bytes >= sent * big.length)
        assert.isFalse(reading.state.closed)
        // The stalled one, reading again, finds its connection closed after a part of them
        // (a paused socket sees the server's close only once it reads what came before).
        stalled.socket.resume()
        yield* until(() => stalled.state.closed)
        assert.isBelow(stalled.state.bytes, (sent * big.length) / 2)
        assert.isAbove(sent, CLIENT_QUEUE)
        reading.socket.destroy()
      }).pipe(
        Effect.provide(streamLayer(dir)),
        Effect.scoped,
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      )
    },
    60_000
  )
})
