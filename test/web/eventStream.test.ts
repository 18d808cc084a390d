/**
 * The event stream (`GET /api/events`, src/web/EventStream.ts) over a real HTTP server on
 * 127.0.0.1: a client that stops reading is dropped, its connection closed, once its socket
 * and its queue are full, never buffered for without bound; a client that reads gets every
 * message meanwhile. Messages of 64 KiB fill the buffers in a few megabytes.
 */
import { assert, describe, it } from "@effect/vitest"
import { CLIENT_QUEUE } from "../../src/web/EventStream.ts"
import { stalledClientRun } from "./eventStreamServer.ts"

describe("the event stream", () => {
  it("drops a client that stops reading, and keeps sending to one that reads", { timeout: 60_000 }, async () => {
    // 25 MiB: more than the socket buffers (a few MiB) and CLIENT_QUEUE messages hold.
    const run = await stalledClientRun(400, 64 * 1024)
    assert.isAbove(run.sent, CLIENT_QUEUE)
    assert.isAtLeast(run.readerBytes, run.sentBytes, "the reader got every message")
    assert.isBelow(run.stalledBytes, run.sentBytes / 2, "the stalled client was dropped, its messages not kept")
  })
})
