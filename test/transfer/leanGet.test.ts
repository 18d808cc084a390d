/**
 * The byte path alone (leanGet over a LeanPool), against a real HTTP/HTTPS server and a real
 * file: what one request holds in memory while the disk is slower than the network.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { leanGet, type RangeSink } from "../../src/transfer/leanGet.ts"
import { LeanPool } from "../../src/transfer/leanPool.ts"
import { nodeTransferFs, type TransferFsShape } from "../../src/transfer/TransferFs.ts"
import { makeContent, RangeServer } from "./support/rangeServer.ts"
import { SCHEMES, tlsFor, trustTestCertificates } from "./support/testTls.ts"

const KiB = 1024

trustTestCertificates()

/** The real file system, each write delayed: a disk slower than the socket, so reads wait on writes. */
const slowWrites = (delayMs: number): TransferFsShape => ({
  ...nodeTransferFs,
  writev: (fd, buffers, position, cb) => setTimeout(() => nodeTransferFs.writev(fd, buffers, position, cb), delayMs)
})

/** A sink on the real file system, counting what it wrote. */
const fileSink = (fd: number, fs: TransferFsShape = nodeTransferFs) => {
  const sink = {
    written: 0,
    fd,
    fs,
    limiter: { take: () => 0, currentLimit: () => 0 },
    onWritten: (n: number) => {
      sink.written += n
    },
    admit: () => true,
    onValidators: () => undefined
  } satisfies RangeSink & { written: number }
  return sink
}

/** A GET of all of file "a" from `server`: its segment (moved on as bytes are written) and spec. */
const wholeFile = (server: RangeServer, length: number, idleTimeoutMs: number) => ({
  segment: { start: 0, end: length, pos: 0, recv: 0 },
  spec: {
    url: new URL(server.link("a")),
    ranged: true,
    size: length,
    ifRange: null,
    idleTimeoutMs,
    userAgent: "dlsync-test"
  }
})

describe.each(SCHEMES)("leanGet over %s", (scheme) => {
  let dir = ""
  beforeEach(() => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-leanget-"))
  })
  afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

  it("holds at most two buffers while its writes lag, and writes every byte", async () => {
    const server = await RangeServer.start(tlsFor(scheme))
    const pool = new LeanPool(512 * KiB)
    try {
      const content = makeContent(8 * 1024 * KiB + 5)
      server.files.set("a", { content, etag: '"v1"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" })
      const path = Path.join(dir, "a.partial")
      const fd = Fs.openSync(path, "w+")
      const sink = fileSink(fd, slowWrites(10))
      const { segment, spec } = wholeFile(server, content.length, 10_000)
      const outcome = await leanGet(pool, spec, segment, sink).promise
      Fs.closeSync(fd)
      assert.deepStrictEqual(outcome, { _tag: "Done" })
      assert.strictEqual(sink.written, content.length)
      assert.strictEqual(segment.pos, content.length)
      assert.isTrue(Fs.readFileSync(path).equals(content), "the file differs from the served content")
      // One filling while one is written; the socket waits for the write, not a third buffer.
      assert.strictEqual(pool.allocated, 2)
    } finally {
      pool.close()
      await server.close()
    }
  })

  it("cuts a body that stops for the idle timeout, never one that keeps moving more slowly than that", async () => {
    const server = await RangeServer.start(tlsFor(scheme))
    const pool = new LeanPool(512 * KiB)
    try {
      const content = makeContent(640 * KiB)
      server.files.set("a", { content, etag: '"v1"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" })
      const get = (idleTimeoutMs: number) => {
        const fd = Fs.openSync(Path.join(dir, "a.partial"), "w+")
        const { segment, spec } = wholeFile(server, content.length, idleTimeoutMs)
        const started = performance.now()
        return leanGet(pool, spec, segment, fileSink(fd))
          .promise.then(
            (outcome) => ({ outcome, ms: performance.now() - started }),
            (error: unknown) => ({ outcome: error, ms: performance.now() - started })
          )
          .finally(() => Fs.closeSync(fd))
      }
      // 64 KiB every 100 ms for a second: each gap is a third of the idle timeout.
      server.faults.ratePerResponse = 640 * KiB
      const moving = await get(300)
      assert.deepStrictEqual(moving.outcome, { _tag: "Done" })
      assert.isAbove(moving.ms, 800, "the body took its paced second")
      server.faults.ratePerResponse = 0
      server.faults.stallAfter = 64 * KiB
      server.faults.stallTimes = 1
      const stalled = await get(300)
      assert.match(String(stalled.outcome), /stalled: no byte for 300 ms/)
      assert.isAtLeast(stalled.ms, 300, "not cut before the idle timeout")
    } finally {
      pool.close()
      await server.close()
    }
  })
})
