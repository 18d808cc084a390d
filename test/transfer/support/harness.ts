/**
 * Builds a transfer engine for a test: a temp mirror root, an inspectable in-memory
 * journal, links minted by the test (counted), and the real or a faulty file system.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Queue } from "effect"
import { TestClock } from "effect/testing"
import { FileId } from "../../../src/domain/FileId.ts"
import { Bandwidth } from "../../../src/transfer/Bandwidth.ts"
import {
  makeProgressTracker,
  ProgressTracker,
  type ProgressTrackerShape
} from "../../../src/transfer/ProgressTracker.ts"
import { TransferEngine, type TransferRequest, type TransferResult } from "../../../src/transfer/TransferEngine.ts"
import { nodeTransferFs, TransferFs, type TransferFsShape } from "../../../src/transfer/TransferFs.ts"
import { makeMemoryJournal, TransferJournal, type TransferRecord } from "../../../src/transfer/TransferJournal.ts"
import { type DownloadLink, LinkError, TransferLinks } from "../../../src/transfer/TransferLinks.ts"
import { type TransferOptions, transferOptions } from "../../../src/transfer/TransferOptions.ts"
import { TransferQueue } from "../../../src/transfer/TransferQueue.ts"
import { makeContent, RangeServer, type TlsIdentity } from "./rangeServer.ts"

/** Starts a server (https with `tls`) holding file "a" of `size` bytes, runs `f`, closes the server. */
export const withServer = <A, E>(
  size: number,
  f: (server: RangeServer, content: Buffer) => Effect.Effect<A, E>,
  tls?: TlsIdentity
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => RangeServer.start(tls)),
    (server) => {
      const content = makeContent(size, size)
      server.files.set("a", { content, etag: '"v1"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" })
      return f(server, content)
    },
    (server) => Effect.promise(() => server.close())
  )

export const completed = (r: TransferResult) => {
  assert.strictEqual(r._tag, "Completed", r._tag === "Completed" ? "" : JSON.stringify(r))
}

export interface Harness {
  readonly root: string
  readonly records: Map<string, TransferRecord>
  readonly linkCalls: Array<string>
  readonly progress: ProgressTrackerShape
  readonly layer: Layer.Layer<TransferEngine>
  readonly request: (fileId: string, size: number, name?: string) => TransferRequest
  /** On the TestClock: each backoff the engine announces is waited out by moving the clock on. */
  readonly download: (request: TransferRequest) => Effect.Effect<TransferResult>
  /** The engine behind a queue, with the same dependencies. */
  readonly queueLayer: Layer.Layer<TransferQueue | TransferEngine>
}

/**
 * Small, fast settings: tiny buffers and batches so faults land mid-file, and connection
 * windows of milliseconds, so that under a live clock (`it.live`) a segmented file steps from
 * its first connection to `segments` (and back, or on) while it runs. Under the TestClock the
 * windows never end: a file keeps its first connection.
 */
export const testOptions = (overrides: Partial<TransferOptions> = {}): TransferOptions =>
  transferOptions({
    segment_threshold: 256 * 1024,
    connectionRampMs: 0,
    connectionWindowMs: 5,
    min_free_space: 0,
    durabilityBytes: 64 * 1024,
    durabilityMs: 200,
    idleTimeoutMs: 2_000,
    backoffBaseMs: 10,
    backoffMaxMs: 50,
    bufferSize: 16 * 1024,
    minSplit: 64 * 1024,
    linkMarginMs: 0,
    ...overrides
  })

export const makeHarness = (options: {
  /** Mints the link for a call (n counts calls from 1). */
  readonly link: (fileId: string, n: number) => string | LinkError
  /** Links from elsewhere (e.g. the API client's link layer) instead of `link`; not counted. */
  readonly links?: TransferLinks["Service"]
  readonly options?: Partial<TransferOptions>
  readonly fs?: TransferFsShape
  readonly records?: Map<string, TransferRecord>
  readonly root?: string
  readonly bandwidth?: number
}): Harness => {
  const root = options.root ?? Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-transfer-"))
  const records = options.records ?? new Map<string, TransferRecord>()
  const linkCalls: Array<string> = []
  const progress = makeProgressTracker()
  const links = TransferLinks.of({
    getLink: (fileId) =>
      Effect.suspend(() => {
        linkCalls.push(fileId)
        const r = options.link(fileId, linkCalls.length)
        if (r instanceof LinkError) return Effect.fail(r)
        const link: DownloadLink = { url: r, expiresAt: new Date(Date.now() + 3_600_000) }
        return Effect.succeed(link)
      })
  })
  const opts = testOptions(options.options)
  const fsLayer = Layer.succeed(TransferFs, TransferFs.of(options.fs ?? nodeTransferFs))
  const progressLayer = Layer.succeed(ProgressTracker, ProgressTracker.of(progress))
  const layer = TransferEngine.layer(opts).pipe(
    Layer.provide([
      Layer.succeed(TransferJournal, TransferJournal.of(makeMemoryJournal(records))),
      fsLayer,
      Layer.succeed(TransferLinks, options.links ?? links),
      Bandwidth.layer({ bandwidth_limit: options.bandwidth ?? 0, bandwidth_schedule: [] }),
      progressLayer
    ])
  )
  const queueLayer = TransferQueue.layer(opts).pipe(Layer.provideMerge(layer), Layer.provide([fsLayer, progressLayer]))
  return {
    root,
    records,
    linkCalls,
    progress,
    layer,
    queueLayer,
    request: (fileId, size, name = `media/${fileId}.bin`) => {
      // The engine lands only into an existing folder (the mirror's plan makes folders first).
      Fs.mkdirSync(Path.dirname(Path.join(root, name)), { recursive: true })
      return {
        fileId: FileId.make(fileId),
        size,
        remoteMtime: new Date("2024-03-04T05:06:07.000Z"),
        root,
        path: name,
        replace: null
      }
    },
    download: (request) =>
      Effect.gen(function* () {
        const engine = yield* TransferEngine
        return yield* engine.download(request)
      }).pipe(Effect.provide(layer, { local: true }), (run) => skippingBackoff(progress, run))
  }
}

/**
 * Runs `effect` on the TestClock, moving the clock on by each backoff the engine announces
 * (its Retrying event comes just before the sleep), so retries take no real time. Under the
 * live clock (it.live) the backoffs are simply slept.
 */
export const skippingBackoff = <A, E, R>(progress: ProgressTrackerShape, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    if (!("adjust" in (yield* Clock.Clock))) return yield* effect
    const delays = yield* Queue.unbounded<number>()
    const unsubscribe = progress.subscribe((e) => {
      if (e._tag === "Retrying") Queue.offerUnsafe(delays, e.delayMs)
    })
    const driver = yield* Effect.forkChild(
      Effect.forever(Effect.flatMap(Queue.take(delays), (ms) => TestClock.adjust(ms)))
    )
    return yield* effect.pipe(Effect.ensuring(Effect.andThen(Fiber.interrupt(driver), Effect.sync(unsubscribe))))
  })

/** A file system whose writes fail with `code` once `budget` bytes have been written. */
export const failingWrites = (budget: number, code = "ENOSPC"): TransferFsShape & { remaining: number } => {
  const fs = {
    ...nodeTransferFs,
    remaining: budget,
    writev: (
      fd: number,
      buffers: ReadonlyArray<Buffer>,
      position: number,
      cb: (error: NodeJS.ErrnoException | null, written: number) => void
    ) => {
      if (fs.remaining <= 0) {
        const e: NodeJS.ErrnoException = new Error(`${code}: injected`)
        e.code = code
        setImmediate(() => cb(e, 0))
        return
      }
      // A write that crosses the budget is short, as a real file system would make it.
      const allowed: Array<Buffer> = []
      let left = fs.remaining
      for (const b of buffers) {
        if (left <= 0) break
        allowed.push(b.length <= left ? b : b.subarray(0, left))
        left -= Math.min(b.length, left)
      }
      fs.remaining = left
      nodeTransferFs.writev(fd, allowed, position, cb)
    }
  }
  return fs
}
