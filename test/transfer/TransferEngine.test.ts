import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import * as Tls from "node:tls"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Queue } from "effect"
import { TestClock } from "effect/testing"
import { transferLinksLayer } from "../../src/engine/transferLinksLayer.ts"
import type { TransferEvent } from "../../src/transfer/ProgressTracker.ts"
import { partialPathFor, TransferEngine } from "../../src/transfer/TransferEngine.ts"
import { nodeTransferFs, type TransferFsShape } from "../../src/transfer/TransferFs.ts"
import type { TransferRecord } from "../../src/transfer/TransferJournal.ts"
import { LinkError, TransferLinks } from "../../src/transfer/TransferLinks.ts"
import { encodeMark, markPathFor } from "../../src/transfer/writtenMark.ts"
import { clientOver, memoryWire, ok, tooMany } from "../api/memoryApi.ts"
import { completed, failingWrites, type Harness, makeHarness, withServer as serve } from "./support/harness.ts"
import { makeContent, RangeServer } from "./support/rangeServer.ts"
import { localhostTls, SCHEMES, tlsFor, trustTestCertificates } from "./support/testTls.ts"

const KiB = 1024
const MiB = 1024 * KiB

/** The service's 429 on the link request, as the link layer hands it over. */
const rateLimited = (fileId: string, retryAfterMillis: number) =>
  new LinkError({ fileId, reason: "rate-limited", message: "status 429", retryAfterMillis })

/** A file's retry or parking: what a rate limit must never cause. */
const countedAsFailure = (e: TransferEvent): boolean => e._tag === "Retrying" || e._tag === "Parked"

/** The tracker's events as a queue, to wait on the next one that matters. */
const eventQueue = (progress: Harness["progress"]) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<TransferEvent>()
    progress.subscribe((e) => Queue.offerUnsafe(queue, e))
    return queue
  })

/** The next event that is a rate-limit wait or a failure (which a rate limit must never cause). */
const nextWaitOrFailure = (queue: Queue.Queue<TransferEvent>) =>
  Effect.gen(function* () {
    while (true) {
      const e = yield* Queue.take(queue)
      if (e._tag === "RateLimited" || countedAsFailure(e)) return e
    }
  })

/** A journal whose first committed record is also handed to `committed`, to await the first commit. */
const journalWithFirstCommit = Effect.gen(function* () {
  const committed = yield* Deferred.make<TransferRecord>()
  const records = new (class extends Map<string, TransferRecord> {
    override set(key: string, value: TransferRecord) {
      Deferred.doneUnsafe(committed, Exit.succeed(value))
      return super.set(key, value)
    }
  })()
  return { records, committed }
})

const assertMirrored = (root: string, name: string, content: Buffer) => {
  const path = Path.join(root, name)
  const got = Fs.readFileSync(path)
  assert.strictEqual(got.length, content.length)
  assert.isTrue(got.equals(content), "final file differs from the remote content")
  assert.strictEqual(Fs.statSync(path).mtime.toISOString(), "2024-03-04T05:06:07.000Z")
  assert.isFalse(Fs.existsSync(Path.join(root, partialPathFor("a"))), "partial file left behind")
}

trustTestCertificates()

// Every test runs over plain HTTP and over TLS: one byte path, the same faults.
describe.each(SCHEMES)("TransferEngine over %s", (scheme) => {
  /** A CDN over this scheme holding file "a" of `size` bytes. */
  const withServer = <A, E>(size: number, f: (server: RangeServer, content: Buffer) => Effect.Effect<A, E>) =>
    serve(size, f, tlsFor(scheme))

  it.effect("streams a small file through, sets its mtime and leaves no partial or journal entry", () =>
    withServer(100 * KiB + 7, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a") })
        const r = yield* h.download(h.request("a", content.length))
        completed(r)
        assertMirrored(h.root, "media/a.bin", content)
        assert.strictEqual(h.records.size, 0)
        assert.deepStrictEqual(h.linkCalls, ["a"])
        assert.strictEqual(server.log.length, 1)
        assert.strictEqual(server.bytesSent("a"), content.length)
      })
    )
  )

  it.effect("lands through the checked rename: never over a file that appeared, over the expected one only", () =>
    withServer(100 * KiB + 7, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a") })
        const request = h.request("a", content.length)
        const target = Path.join(h.root, request.path)
        Fs.writeFileSync(target, "the user's own file")
        const refused = yield* h.download(request)
        assert.strictEqual(refused._tag, "Parked")
        assert.include(refused._tag === "Parked" ? refused.reason : "", "already there")
        assert.strictEqual(Fs.readFileSync(target, "utf8"), "the user's own file", "the user's file is kept")
        assert.isFalse(Fs.existsSync(Path.join(h.root, partialPathFor("a"))), "the refused partial is dropped")
        assert.strictEqual(h.records.size, 0)

        const st = Fs.lstatSync(target, { bigint: true })
        const expected = { type: "file" as const, size: Number(st.size), mtimeNs: st.mtimeNs, ino: st.ino }
        const replaced = yield* h.download({ ...request, replace: expected })
        completed(replaced)
        assertMirrored(h.root, "media/a.bin", content)
        const now = Fs.lstatSync(target, { bigint: true })
        assert.deepStrictEqual(replaced._tag === "Completed" ? replaced.written : null, {
          type: "file",
          size: content.length,
          mtimeNs: now.mtimeNs,
          ino: now.ino
        })
      })
    )
  )

  it.effect("refuses a final path outside the root or under .dlsync before fetching anything", () =>
    withServer(10, (server) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a") })
        for (const path of ["../a.bin", ".dlsync/a.bin", "/etc/a.bin"]) {
          const r = yield* h.download({ ...h.request("a", 10), path })
          assert.strictEqual(r._tag, "Parked", path)
        }
        assert.deepStrictEqual(h.linkCalls, [])
      })
    )
  )

  // Live clock: the file steps from its first connection after a window (5 ms here).
  it.live("downloads a large file as parallel ranges written in place", () =>
    withServer(1024 * KiB + 3, (server, content) =>
      Effect.gen(function* () {
        // Each response capped (1 MiB/s), as many CDNs do: the file steps from one connection to
        // four long before one alone could finish it, even on a busy machine.
        server.faults.ratePerResponse = 1024 * KiB
        const h = makeHarness({ link: () => server.link("a"), options: { segments: 4 } })
        const r = yield* h.download(h.request("a", content.length))
        completed(r)
        assertMirrored(h.root, "media/a.bin", content)
        assert.isAtLeast(server.maxPumping, 4)
        const ranges = server.log.map((l) => l.headers.range)
        assert.isAtLeast(ranges.length, 4)
        assert.include(ranges, "bytes=0-262143")
        // Work stealing never writes a byte twice (a stopped request's bytes in flight are dropped).
        assert.strictEqual(r._tag === "Completed" ? r.fetched : 0, content.length)
      })
    )
  )

  it.effect("a server that ignores Range: restarts as one plain GET, never splices", () =>
    withServer(600 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.ignoreRange = true
        const h = makeHarness({ link: () => server.link("a"), options: { segments: 4 } })
        completed(yield* h.download(h.request("a", content.length)))
        assertMirrored(h.root, "media/a.bin", content)
        const last = server.log[server.log.length - 1]
        assert.isUndefined(last?.headers.range)
      })
    )
  )

  it.effect("a wrong Content-Range is never written: the file is parked after bounded restarts", () =>
    withServer(300 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.shiftContentRange = 10
        const h = makeHarness({ link: () => server.link("a"), options: { segments: 4, maxRestarts: 2 } })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.include(r._tag === "Parked" ? r.reason : "", "Content-Range")
        assert.isFalse(Fs.existsSync(Path.join(h.root, "media/a.bin")))
        assert.strictEqual(h.records.get("a")?.segments.length, 0)
      })
    )
  )

  it.effect("a Content-Range total that disagrees with the size is refused", () =>
    withServer(300 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.wrongTotal = content.length + 1
        const h = makeHarness({ link: () => server.link("a"), options: { maxRestarts: 1 } })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.isFalse(Fs.existsSync(Path.join(h.root, "media/a.bin")))
      })
    )
  )

  it.effect("a validator changed between attempts restarts from zero with the new version", () =>
    withServer(512 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.cutAfter = 200 * KiB
        server.faults.cutTimes = 1
        const h = makeHarness({ link: () => server.link("a"), options: { maxAttempts: 1, segment_threshold: 1e9 } })
        const first = yield* h.download(h.request("a", content.length))
        assert.strictEqual(first._tag, "Parked")
        const durable = h.records.get("a")?.segments[0]?.durable ?? 0
        assert.isAbove(durable, 0, "progress was made durable before parking")
        assert.strictEqual(h.records.get("a")?.etag, '"v1"')

        const v2 = makeContent(content.length, 99)
        server.files.set("a", { content: v2, etag: '"v2"', lastModified: "Tue, 02 Jan 2024 00:00:00 GMT" })
        const second = yield* h.download(h.request("a", content.length))
        completed(second)
        assertMirrored(h.root, "media/a.bin", v2)
        const resumed = server.log.find((l) => l.headers["if-range"] !== undefined)
        assert.strictEqual(resumed?.headers["if-range"], '"v1"')
        assert.strictEqual(resumed?.status, 200)
      })
    )
  )

  it.effect("a link that expires mid-body is replaced and the transfer continues from the bytes written", () =>
    withServer(512 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.expireTokenAfter = 200 * KiB
        const h = makeHarness({
          link: (_, n) => server.link("a", `t${n}`),
          options: { segment_threshold: 1e9 }
        })
        server.faults.expireTokenAfter = 200 * KiB
        const r = yield* h.download(h.request("a", content.length))
        server.faults.expireTokenAfter = null
        completed(r)
        assertMirrored(h.root, "media/a.bin", content)
        assert.isAtLeast(h.linkCalls.length, 2)
        const statuses = server.log.map((l) => l.status)
        assert.include(statuses, 403)
        // Continued, not restarted: at most a buffer or two fetched again.
        assert.isAtMost(server.bytesSent("a"), content.length + 200 * KiB + 64 * KiB)
        assert.isAtMost(server.log.filter((l) => l.headers.range === "bytes=0-524287").length, 1)
      })
    )
  )

  it.effect("a connection reset mid-body resumes from the bytes written", () =>
    withServer(512 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.cutAfter = 100 * KiB
        server.faults.cutTimes = 2
        const h = makeHarness({ link: () => server.link("a"), options: { segment_threshold: 1e9 } })
        const r = yield* h.download(h.request("a", content.length))
        completed(r)
        assertMirrored(h.root, "media/a.bin", content)
        assert.strictEqual(r._tag === "Completed" ? r.attempts : 0, 3)
        // Resumed where the bytes stopped, never from zero (the server also counts what died in socket buffers).
        assert.strictEqual(server.log.filter((l) => l.headers.range?.startsWith("bytes=0-")).length, 1)
        assert.isAtMost(server.bytesSent("a"), content.length + 2 * 100 * KiB)
        assert.deepStrictEqual(h.linkCalls, ["a"], "the link is reused")
      })
    )
  )

  it.effect("a truncated body (clean close short of Content-Length) is an error, then resumed", () =>
    withServer(400 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.truncateAfter = 150 * KiB
        server.faults.truncateTimes = 1
        const h = makeHarness({ link: () => server.link("a"), options: { segment_threshold: 1e9 } })
        completed(yield* h.download(h.request("a", content.length)))
        assertMirrored(h.root, "media/a.bin", content)
        assert.isAtLeast(server.log.length, 2)
      })
    )
  )

  it.effect("a stalled body is cut by the idle timeout and resumed", () =>
    withServer(300 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.stallAfter = 100 * KiB
        server.faults.stallTimes = 1
        const h = makeHarness({
          link: () => server.link("a"),
          options: { segment_threshold: 1e9, idleTimeoutMs: 300 }
        })
        completed(yield* h.download(h.request("a", content.length)))
        assertMirrored(h.root, "media/a.bin", content)
        assert.strictEqual(server.log[1]?.headers.range, `bytes=${100 * KiB}-${content.length - 1}`)
      })
    )
  )

  it.effect("written bytes are committed once durabilityMs has passed on the Clock, not before", () =>
    withServer(256 * KiB, (server, content) =>
      Effect.gen(function* () {
        // 40 KiB arrive, then nothing: two 16 KiB buffers are written (each filled up to its
        // reserve, writePipeline.ts, or into it: 24–32 KiB), fewer than durabilityBytes (64 KiB), so
        // only the committer's timer can make them durable.
        server.faults.stallAfter = 40 * KiB
        server.faults.stallTimes = 1
        const written = yield* Deferred.make<void>()
        let writtenBytes = 0
        const fs: TransferFsShape = {
          ...nodeTransferFs,
          writev: (fd, buffers, position, cb) =>
            nodeTransferFs.writev(fd, buffers, position, (e, n) => {
              cb(e, n)
              writtenBytes += n
              if (writtenBytes >= 24 * KiB) Deferred.doneUnsafe(written, Exit.void)
            })
        }
        const { records, committed } = yield* journalWithFirstCommit
        const h = makeHarness({
          link: () => server.link("a"),
          fs,
          records,
          options: { segment_threshold: 1e9, durabilityMs: 60_000, idleTimeoutMs: 60_000 }
        })
        const fiber = yield* Effect.forkChild(h.download(h.request("a", content.length)))
        yield* Deferred.await(written)
        yield* TestClock.adjust(59_999)
        assert.strictEqual(records.size, 0, "committed before durabilityMs")
        yield* TestClock.adjust(1)
        const record = yield* Deferred.await(committed)
        // Everything written before the deadline (later writes may follow it).
        const [durable] = record.segments.map((s) => s.durable)
        assert.isTrue(durable !== undefined && durable >= 24 * KiB && durable <= writtenBytes, `durable ${durable}`)
        yield* Fiber.interrupt(fiber)
      })
    )
  )

  it.effect("within the last batch, written bytes are committed as they arrive, without the batch or the timer", () =>
    withServer(256 * KiB, (server, content) =>
      Effect.gen(function* () {
        // The batch (1 MiB) is larger than the file and the timer never fires (TestClock):
        // only the near-end flushes (commitPolicy.ts) commit. 160 KiB arrive, then nothing.
        server.faults.stallAfter = 160 * KiB
        server.faults.stallTimes = 1
        const { records, committed } = yield* journalWithFirstCommit
        const h = makeHarness({
          link: () => server.link("a"),
          records,
          options: { segment_threshold: 1e9, durabilityBytes: MiB, durabilityMs: 60_000, idleTimeoutMs: 60_000 }
        })
        const fiber = yield* Effect.forkChild(h.download(h.request("a", content.length)))
        const record = yield* Deferred.await(committed)
        // Due once the unsynced bytes reach what is still to come (128 KiB of 256).
        assert.isAtLeast(record.segments[0]?.durable ?? 0, 128 * KiB)
        yield* Fiber.interrupt(fiber)
      })
    )
  )

  it.effect("5xx answers are retried with backoff and counted as attempts", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.failNext = 2
        server.faults.failStatus = 503
        const h = makeHarness({ link: () => server.link("a") })
        const r = yield* h.download(h.request("a", content.length))
        completed(r)
        assert.strictEqual(r._tag === "Completed" ? r.attempts : 0, 3)
      })
    )
  )

  it.effect("a CDN that keeps refusing fresh links parks the file with the reason", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.failNext = 100
        server.faults.failStatus = 403
        const h = makeHarness({ link: (_, n) => server.link("a", `t${n}`), options: { maxLinkRefreshes: 2 } })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.include(r._tag === "Parked" ? r.reason : "", "403")
        assert.strictEqual(h.linkCalls.length, 3)
        assert.strictEqual(h.records.get("a")?.attempts, 3)
      })
    )
  )

  it.effect("a locked file is parked without touching the CDN", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({
          link: (fileId) => new LinkError({ fileId, reason: "locked", message: "resource_locked" })
        })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.strictEqual(server.log.length, 0)
      })
    )
  )

  it.effect(
    "through the API client: link requests answered 429 Retry-After 120 s three times never park the file",
    () =>
      withServer(64 * KiB, (server, content) =>
        Effect.gen(function* () {
          const wire = memoryWire((_method, _path, n) =>
            n < 3 ? tooMany(120) : ok({ url: server.link("a"), expires_at: null })
          )
          const links = yield* Effect.provide(
            Effect.service(TransferLinks),
            transferLinksLayer.pipe(Layer.provide(clientOver(wire.layer)), Layer.orDie)
          )
          const h = makeHarness({ link: () => "unused", links, options: { maxAttempts: 2 } })
          const events: Array<TransferEvent> = []
          h.progress.subscribe((e) => events.push(e))
          const queue = yield* eventQueue(h.progress)
          const fiber = yield* Effect.forkChild(h.download(h.request("f_1", content.length, "media/a.bin")))
          for (let n = 1; n <= 3; n++) {
            const e = yield* nextWaitOrFailure(queue)
            assert.strictEqual(e._tag, "RateLimited", "a 429 taken for a failed attempt")
            yield* TestClock.adjust("120 seconds")
          }
          const r = yield* Fiber.join(fiber)
          completed(r)
          assert.strictEqual(r._tag === "Completed" ? r.attempts : 0, 1)
          assert.deepStrictEqual(
            wire.sent.map((x) => `${x.status} at ${x.at / 1000} s`),
            ["429 at 0 s", "429 at 120 s", "429 at 240 s", "200 at 360 s"],
            "one link request per Retry-After, none inside it"
          )
          assert.isFalse(events.some((e) => e._tag === "Parked"))
          const got = Fs.readFileSync(Path.join(h.root, "media/a.bin"))
          assert.isTrue(got.equals(content))
        })
      )
  )

  it.effect("a link answered 429 Retry-After 120 s three times: waits each time, counts no attempt, completes", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({
          link: (fileId, n) => (n <= 3 ? rateLimited(fileId, 120_000) : server.link("a")),
          // Fewer attempts than 429s: a 429 counted as a failed attempt would park the file.
          options: { maxAttempts: 2 }
        })
        const events: Array<TransferEvent> = []
        h.progress.subscribe((e) => events.push(e))
        const queue = yield* eventQueue(h.progress)
        const fiber = yield* Effect.forkChild(h.download(h.request("a", content.length)))
        for (let n = 1; n <= 3; n++) {
          const wait = yield* nextWaitOrFailure(queue)
          assert.strictEqual(wait._tag, "RateLimited", "a 429 taken for a failed attempt")
          assert.strictEqual(
            wait?._tag === "RateLimited" ? wait.until : 0,
            n * 120_000,
            "waits until the service's time"
          )
          const waiting = h.progress.snapshot(0).files[0]
          assert.strictEqual(waiting?.rateLimitedUntil, n * 120_000, "its progress says until when it waits")
          assert.strictEqual(h.records.get("a")?.attempts ?? 0, 0, "no attempt counted")
          // Not a moment before the service's time: no link request at 119 s (adjust lets
          // every fiber it wakes run until it suspends).
          yield* TestClock.adjust("119 seconds")
          assert.strictEqual(h.linkCalls.length, n)
          yield* TestClock.adjust("1 second")
        }
        const r = yield* Fiber.join(fiber)
        completed(r)
        assert.strictEqual(r._tag === "Completed" ? r.attempts : 0, 1, "the one attempt that was sent")
        assert.strictEqual(h.linkCalls.length, 4)
        assert.isFalse(
          events.some((e) => e._tag === "Parked" || e._tag === "Retrying"),
          "never parked or retried"
        )
        assertMirrored(h.root, "media/a.bin", content)
      })
    )
  )

  it.effect("a rate limit longer than maxRateLimitWaitMs is not waited, and the file is not parked", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({
          link: (fileId) => rateLimited(fileId, 600_000),
          options: { maxRateLimitWaitMs: 300_000, maxAttempts: 1 }
        })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "RateLimited")
        assert.strictEqual(r._tag === "RateLimited" ? r.until : 0, 600_000)
        assert.include(r._tag === "RateLimited" ? r.reason : "", "until 1970-01-01T00:10:00Z")
        assert.strictEqual(h.records.get("a")?.attempts ?? 0, 0, "no attempt counted")
        assert.strictEqual(h.progress.snapshot(0).overall.parked, 0)
        assert.strictEqual(server.log.length, 0)
      })
    )
  )

  it.effect("ENOSPC mid-write pauses the transfer, leaves no visible file, and it resumes when space returns", () =>
    withServer(512 * KiB, (server, content) =>
      Effect.gen(function* () {
        const faulty = failingWrites(200 * KiB)
        const first = makeHarness({ link: () => server.link("a"), fs: faulty, options: { segment_threshold: 1e9 } })
        const r = yield* first.download(first.request("a", content.length))
        assert.strictEqual(r._tag, "PausedForSpace")
        assert.isFalse(Fs.existsSync(Path.join(first.root, "media/a.bin")))
        const durable = first.records.get("a")?.segments[0]?.durable ?? 0
        assert.isAtMost(durable, 200 * KiB)
        assert.isAbove(durable, 0)

        const second = makeHarness({
          link: () => server.link("a"),
          root: first.root,
          records: first.records,
          options: { segment_threshold: 1e9 }
        })
        completed(yield* second.download(second.request("a", content.length)))
        assertMirrored(first.root, "media/a.bin", content)
        const resumed = server.log[server.log.length - 1]
        assert.strictEqual(resumed?.headers.range, `bytes=${durable}-${content.length - 1}`)
      })
    )
  )

  it.effect("a file is not started when it would leave less than min_free_space", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a"), options: { min_free_space: Number.MAX_SAFE_INTEGER } })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "PausedForSpace")
        assert.strictEqual(server.log.length, 0)
      })
    )
  )

  it.effect("no credential ever reaches the CDN, also after a redirect to another origin", () =>
    Effect.gen(function* () {
      const other = yield* Effect.promise(() => RangeServer.start(tlsFor(scheme)))
      yield* withServer(600 * KiB, (server, content) =>
        Effect.gen(function* () {
          other.files.set("a", { content, etag: '"v1"', lastModified: null })
          server.faults.redirectBase = other.base
          const h = makeHarness({ link: () => server.link("a", "t0", "r"), options: { segments: 3 } })
          completed(yield* h.download(h.request("a", content.length)))
          assertMirrored(h.root, "media/a.bin", content)
          assert.isAtLeast(other.log.length, 3)
          assert.isTrue(
            [...server.log, ...other.log].every((l) => l.headers.authorization === undefined),
            "no Authorization"
          )
          const allowed = new Set(["host", "connection", "range", "if-range", "accept-encoding", "user-agent"])
          for (const l of [...server.log, ...other.log]) {
            for (const key of Object.keys(l.headers)) assert.isTrue(allowed.has(key), `header ${key} sent to the CDN`)
          }
        })
      ).pipe(Effect.ensuring(Effect.promise(() => other.close())))
    })
  )

  it.effect("a redirect loop is followed a bounded number of times, then the file is parked", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.faults.redirectLoop = true
        const h = makeHarness({ link: () => server.link("a", "t0", "r"), options: { maxRedirects: 3 } })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.include(r._tag === "Parked" ? r.reason : "", "more than 3 redirects")
        assert.strictEqual(r._tag === "Parked" ? r.attempts : 0, 1, "not retried: the loop would not end")
        assert.strictEqual(server.log.length, 4, "the link, then 3 redirects")
      })
    )
  )

  describe("bodies not framed by Content-Length", () => {
    for (const framing of ["chunked", "closeDelimited"] as const) {
      // Live clock and responses capped at 1 MiB/s (the first connection alone would take a
      // second, 200 step windows, even on a busy machine): the resets meet several connections.
      it.live(`${framing}: downloads segmented, resumes after resets, and writes every byte once`, () =>
        withServer(1024 * KiB + 5, (server, content) =>
          Effect.gen(function* () {
            server.faults[framing] = true
            server.faults.ratePerResponse = 1024 * KiB
            server.faults.cutAfter = 100 * KiB
            server.faults.cutTimes = 2
            const h = makeHarness({ link: () => server.link("a"), options: { segments: 4 } })
            const r = yield* h.download(h.request("a", content.length))
            completed(r)
            assertMirrored(h.root, "media/a.bin", content)
            assert.strictEqual(r._tag === "Completed" ? r.fetched : 0, content.length)
            assert.isAtLeast(r._tag === "Completed" ? r.attempts : 0, 2)
            assert.isAtLeast(server.maxPumping, 2)
            if (framing === "closeDelimited") {
              const ports = server.log.map((l) => l.remotePort)
              assert.strictEqual(new Set(ports).size, ports.length, "a close-delimited connection is never reused")
            }
          })
        )
      )
    }

    it.effect("a close-delimited body cut short of its range is an error, then resumed", () =>
      withServer(400 * KiB, (server, content) =>
        Effect.gen(function* () {
          server.faults.closeDelimited = true
          server.faults.truncateAfter = 150 * KiB
          server.faults.truncateTimes = 1
          const h = makeHarness({ link: () => server.link("a"), options: { segment_threshold: 1e9 } })
          const r = yield* h.download(h.request("a", content.length))
          completed(r)
          assertMirrored(h.root, "media/a.bin", content)
          assert.strictEqual(r._tag === "Completed" ? r.attempts : 0, 2)
          assert.strictEqual(server.log[1]?.headers.range?.startsWith("bytes=0-"), false, "resumed, not restarted")
        })
      )
    )

    it.effect("a stalled chunked body is cut by the idle timeout", () =>
      withServer(300 * KiB, (server, content) =>
        Effect.gen(function* () {
          server.faults.chunked = true
          server.faults.stallAfter = 100 * KiB
          server.faults.stallTimes = 1
          const h = makeHarness({
            link: () => server.link("a"),
            options: { segment_threshold: 1e9, idleTimeoutMs: 300 }
          })
          completed(yield* h.download(h.request("a", content.length)))
          assertMirrored(h.root, "media/a.bin", content)
        })
      )
    )

    it.effect("ENOSPC during a chunked body pauses and the file resumes later", () =>
      withServer(512 * KiB, (server, content) =>
        Effect.gen(function* () {
          server.faults.chunked = true
          const options = { segment_threshold: 1e9 }
          const first = makeHarness({ link: () => server.link("a"), fs: failingWrites(200 * KiB), options })
          assert.strictEqual((yield* first.download(first.request("a", content.length)))._tag, "PausedForSpace")
          const second = makeHarness({
            link: () => server.link("a"),
            root: first.root,
            records: first.records,
            options
          })
          completed(yield* second.download(second.request("a", content.length)))
          assertMirrored(first.root, "media/a.bin", content)
        })
      )
    )
  })

  it.effect("reuses kept-alive connections, and a connection the server closed meanwhile costs nothing", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        server.files.set("b", { content, etag: '"b"', lastModified: null })
        server.files.set("c", { content, etag: '"c"', lastModified: null })
        const h = makeHarness({ link: (id) => server.link(id) })
        yield* Effect.gen(function* () {
          const engine = yield* TransferEngine
          completed(yield* engine.download(h.request("a", content.length)))
          completed(yield* engine.download(h.request("b", content.length)))
          assert.strictEqual(server.connections, 1, "the second file reuses the connection")
          // The server drops the idle connection; the next request must not fail for it.
          server.closeIdleConnections()
          yield* Effect.promise(() => server.whenConnectionsClosed())
          completed(yield* engine.download(h.request("c", content.length)))
          assert.strictEqual(server.connections, 2)
        }).pipe(Effect.provide(h.layer))
        for (const id of ["a", "b", "c"]) {
          assert.isTrue(Fs.readFileSync(Path.join(h.root, `media/${id}.bin`)).equals(content))
        }
      })
    )
  )

  it.effect("a process killed before its first commit resumes from its written mark in the same boot", () =>
    withServer(1024 * KiB, (server, content) =>
      Effect.gen(function* () {
        const size = content.length
        const half = size / 2
        // What the killed process left: a journal entry with nothing durable yet, a preallocated
        // partial file holding the first 100 KiB of each half, and a mark saying so.
        const h = makeHarness({ link: () => server.link("a"), options: { segments: 2, bootId: "boot-1" } })
        const partialRel = partialPathFor("a")
        const partialAbs = Path.join(h.root, partialRel)
        const written = 100 * KiB
        const partial = Buffer.alloc(size)
        content.copy(partial, 0, 0, written)
        content.copy(partial, half, half, half + written)
        Fs.mkdirSync(Path.dirname(partialAbs), { recursive: true })
        Fs.writeFileSync(partialAbs, partial)
        const validators = { etag: '"v1"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" }
        h.records.set("a", {
          fileId: "a",
          size,
          ...validators,
          partialPath: partialRel,
          segments: [
            { start: 0, end: half, durable: 0 },
            { start: half, end: size, durable: 0 }
          ],
          attempts: 0,
          lastError: null
        })
        const segments = [
          { start: 0, end: half, pos: written, recv: written },
          { start: half, end: size, pos: half + written, recv: half + written }
        ]
        Fs.writeFileSync(markPathFor(partialAbs), encodeMark("boot-1", { size, ...validators, segments }))

        const r = yield* h.download(h.request("a", size))
        completed(r)
        assertMirrored(h.root, "media/a.bin", content)
        const ranges = server.log.map((l) => l.headers.range ?? "")
        assert.isTrue(
          ranges.some((range) => range.startsWith(`bytes=${written}-`)),
          ranges.join(", ")
        )
        assert.isTrue(
          ranges.some((range) => range.startsWith(`bytes=${half + written}-`)),
          ranges.join(", ")
        )
        assert.strictEqual(r._tag === "Completed" ? r.fetched : 0, size - 2 * written)
      })
    )
  )

  it.effect("a process killed before any journal record resumes from its mark alone, If-Range on its version", () =>
    withServer(1024 * KiB, (server, content) =>
      Effect.gen(function* () {
        const size = content.length
        const h = makeHarness({ link: () => server.link("a"), options: { segments: 1, bootId: "boot-1" } })
        const partialAbs = Path.join(h.root, partialPathFor("a"))
        const written = 300 * KiB
        const partial = Buffer.alloc(size)
        content.copy(partial, 0, 0, written)
        Fs.mkdirSync(Path.dirname(partialAbs), { recursive: true })
        Fs.writeFileSync(partialAbs, partial)
        const validators = { etag: '"v1"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" }
        const segments = [{ start: 0, end: size, pos: written, recv: written }]
        Fs.writeFileSync(markPathFor(partialAbs), encodeMark("boot-1", { size, ...validators, segments }))

        completed(yield* h.download(h.request("a", size)))
        assertMirrored(h.root, "media/a.bin", content)
        assert.deepStrictEqual(
          server.log.map((l) => [l.headers.range, l.headers["if-range"]]),
          [[`bytes=${written}-${size - 1}`, '"v1"']]
        )
      })
    )
  )

  it.effect("a body longer than promised is never a finished file", () =>
    Effect.gen(function* () {
      // A raw server: chunked 200 with more bytes than the file has.
      const respond = (socket: Net.Socket) => {
        socket.once("data", () => {
          const body = Buffer.alloc(1000, 1)
          socket.end(
            `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body.toString()}\r\n0\r\n\r\n`
          )
        })
      }
      const server = scheme === "https" ? Tls.createServer(localhostTls, respond) : Net.createServer(respond)
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const address = server.address()
      const port = address !== null && typeof address === "object" ? address.port : 0
      const h = makeHarness({ link: () => `${scheme}://127.0.0.1:${port}/x` })
      const r = yield* h.download(h.request("a", 900))
      server.close()
      assert.strictEqual(r._tag, "Parked")
      assert.include(r._tag === "Parked" ? r.reason : "", "longer")
      assert.isFalse(Fs.existsSync(Path.join(h.root, "media/a.bin")))
    })
  )
})
