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
      let written = 0
      const sink: RangeSink = {
        fd,
        fs: slowWrites(10),
        limiter: { take: () => 0, currentLimit: () => 0 },
        onWritten: (n) => {
          written += n
        },
        admit: () => true,
        onValidators: () => undefined
      }
      const segment = { start: 0, end: content.length, pos: 0, recv: 0 }
      const spec = {
        url: new URL(server.link("a")),
        ranged: true,
        size: content.length,
        ifRange: null,
        idleTimeoutMs: 10_000,
        userAgent: "dlsync-test"
      }
      const outcome = await leanGet(pool, spec, segment, sink).promise
      Fs.closeSync(fd)
      assert.deepStrictEqual(outcome, { _tag: "Done" })
      assert.strictEqual(written, content.length)
      assert.strictEqual(segment.pos, content.length)
      assert.isTrue(Fs.readFileSync(path).equals(content), "the file differs from the served content")
      // One filling while one is written; the socket waits for the write, not a third buffer.
      assert.strictEqual(pool.allocated, 2)
    } finally {
      pool.close()
      await server.close()
    }
  })
})
