/**
 * The byte path alone (leanGet over a LeanPool), against a real HTTP/HTTPS server and a real
 * file: what one request holds in memory while the disk is slower than the network.
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Tls from "node:tls"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { leanGet } from "../../src/transfer/leanGet.ts"
import { LeanPool } from "../../src/transfer/leanPool.ts"
import type { RangeSink } from "../../src/transfer/rangeGet.ts"
import { TransferFault } from "../../src/transfer/TransferFault.ts"
import { nodeTransferFs, type TransferFsShape } from "../../src/transfer/TransferFs.ts"
import { makeContent, RangeServer } from "./support/rangeServer.ts"
import { localhostTls, SCHEMES, type Scheme, tlsFor, trustTestCertificates } from "./support/testTls.ts"

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

/**
 * A server speaking raw bytes: each request (over all connections, counted from 0) is
 * answered with `answer(n)`, written at once.
 */
const rawServer = async (scheme: Scheme, answer: (n: number) => string) => {
  let requests = 0
  let connections = 0
  const onConnection = (socket: Net.Socket) => {
    connections++
    let pending = ""
    socket.on("error", () => socket.destroy())
    socket.on("data", (d: Buffer) => {
      pending += d.toString("latin1")
      for (let i = pending.indexOf("\r\n\r\n"); i >= 0; i = pending.indexOf("\r\n\r\n")) {
        pending = pending.slice(i + 4)
        socket.write(answer(requests++))
      }
    })
  }
  const server = scheme === "https" ? Tls.createServer(localhostTls, onConnection) : Net.createServer(onConnection)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = address !== null && typeof address === "object" ? address.port : 0
  return {
    url: new URL(`${scheme}://127.0.0.1:${port}/x`),
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

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
  /** A GET of all of a `size`-byte file at `url` into a fresh file: its outcome (or fault) and the file's bytes. */
  const getAll = async (pool: LeanPool, url: URL, size: number, name: string) => {
    const path = Path.join(dir, name)
    const fd = Fs.openSync(path, "w+")
    const spec = { url, ranged: true, size, ifRange: null, idleTimeoutMs: 10_000, userAgent: "dlsync-test" }
    const outcome = await leanGet(pool, spec, { start: 0, end: size, pos: 0, recv: 0 }, fileSink(fd)).promise.then(
      (o) => o,
      (e: unknown) => e
    )
    Fs.closeSync(fd)
    return { outcome, bytes: Fs.readFileSync(path).toString("latin1") }
  }

  it("skips interim 1xx responses before the final one", async () => {
    const server = await rawServer(
      scheme,
      () =>
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" +
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
    )
    const pool = new LeanPool(64 * KiB)
    try {
      const got = await getAll(pool, server.url, 5, "a")
      assert.deepStrictEqual(got.outcome, { _tag: "Done" })
      assert.strictEqual(got.bytes, "hello")
    } finally {
      pool.close()
      await server.close()
    }
  })

  it("refuses a body framed by both Content-Length and Transfer-Encoding, writing nothing", async () => {
    const server = await rawServer(
      scheme,
      () => "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    )
    const pool = new LeanPool(64 * KiB)
    try {
      const got = await getAll(pool, server.url, 5, "a")
      assert.instanceOf(got.outcome, TransferFault)
      assert.strictEqual(got.outcome instanceof TransferFault ? got.outcome.kind : "", "fatal")
      assert.match(String(got.outcome), /both Content-Length and Transfer-Encoding/)
      assert.strictEqual(got.bytes, "", "nothing written")
    } finally {
      pool.close()
      await server.close()
    }
  })

  it("never reuses a socket that carried bytes after its response", async () => {
    const server = await rawServer(scheme, (n) =>
      n === 0
        ? "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloJUNK"
        : "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nworld"
    )
    const pool = new LeanPool(64 * KiB)
    try {
      const first = await getAll(pool, server.url, 5, "a")
      const second = await getAll(pool, server.url, 5, "b")
      assert.deepStrictEqual([first.outcome, second.outcome], [{ _tag: "Done" }, { _tag: "Done" }])
      assert.deepStrictEqual([first.bytes, second.bytes], ["hello", "world"])
      assert.strictEqual(server.connections(), 2, "the second request on a socket of its own")
    } finally {
      pool.close()
      await server.close()
    }
  })

  it("reuses a socket whose response was read exactly to its end", async () => {
    const server = await rawServer(
      scheme,
      (n) => `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n${n === 0 ? "hello" : "world"}\r\n0\r\n\r\n`
    )
    const pool = new LeanPool(64 * KiB)
    try {
      const first = await getAll(pool, server.url, 5, "a")
      const second = await getAll(pool, server.url, 5, "b")
      assert.deepStrictEqual([first.bytes, second.bytes], ["hello", "world"])
      assert.strictEqual(server.connections(), 1)
    } finally {
      pool.close()
      await server.close()
    }
  })
})
