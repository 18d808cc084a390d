/**
 * The byte path's write pipeline alone, on a real file: what lands in it is written in order
 * at its positions, with two buffers while the disk lags, held by `admit`, and nothing more
 * after a failed write.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import fc from "fast-check"
import type { WriteCallback } from "../../src/transfer/TransferFs.ts"
import { type BufferPool, WritePipeline, type WriteTarget } from "../../src/transfer/writePipeline.ts"
import { makeContent } from "./support/rangeServer.ts"

const KiB = 1024

/** A pool counting what it allocated and what it holds. */
const countingPool = (bufferSize: number) => {
  const free: Array<Buffer> = []
  const pool = {
    bufferSize,
    allocated: 0,
    given: 0,
    takeBuffer: () => {
      const kept = free.pop()
      if (kept !== undefined) return kept
      pool.allocated++
      return Buffer.alloc(bufferSize)
    },
    giveBuffer: (b: Buffer) => {
      pool.given++
      free.push(b)
    },
    free
  } satisfies BufferPool & Record<string, unknown>
  return pool
}

/**
 * Real positional writes, run at once (`auto`) or when the test lets the oldest one run
 * (`complete`); `short` writes half of what is asked, `failAt` fails that write with EIO.
 */
const fileWrites = (
  fd: number,
  options: { readonly auto?: boolean; readonly short?: boolean; readonly failAt?: number } = {}
) => {
  const pending: Array<() => void> = []
  let writes = 0
  const target: WriteTarget & { admitted: boolean; resumes: Array<() => void> } = {
    fd,
    admitted: true,
    resumes: [],
    admit: (resume) => {
      if (target.admitted) return true
      target.resumes.push(resume)
      return false
    },
    fs: {
      writev: (fd: number, buffers: ReadonlyArray<Buffer>, position: number, cb: WriteCallback) => {
        const n = writes++
        const run = () => {
          if (n === options.failAt) return cb(Object.assign(new Error("EIO: i/o error"), { code: "EIO" }), 0)
          const [b] = buffers
          const part =
            options.short === true && b !== undefined && b.length > 1 ? [b.subarray(0, b.length >> 1)] : buffers
          Fs.writev(fd, part, position, cb)
        }
        if (options.auto === true) run()
        else pending.push(run)
      }
    }
  }
  return {
    target,
    /** Lets the oldest pending write run. */
    complete: () => pending.shift()?.(),
    started: () => writes
  }
}

/** Pipeline events that count, and resolve `nextWriteEnd` at each write's end. */
const recorder = () => {
  let wake: (() => void) | null = null
  const r = {
    written: [] as Array<number>,
    failures: [] as Array<string>,
    ended: [] as Array<boolean>,
    events: {
      written: (n: number) => void r.written.push(n),
      failed: (e: Error) => void r.failures.push(e.message),
      writeEnded: (freed: boolean) => {
        r.ended.push(freed)
        const w = wake
        wake = null
        w?.()
      }
    },
    nextWriteEnd: () => new Promise<void>((resolve) => (wake = resolve))
  }
  return r
}

describe("WritePipeline on a real file", () => {
  let dir = ""
  let fd = -1
  let path = ""
  beforeEach(() => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-pipeline-"))
    path = Path.join(dir, "partial")
    fd = Fs.openSync(path, "w+")
  })
  afterEach(() => {
    Fs.closeSync(fd)
    Fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Feeds `data` in reads of the given sizes as the byte path does: no read while `waiting`. */
  const feed = async (data: Buffer, start: number, reads: ReadonlyArray<number>, short: boolean) => {
    const pool = countingPool(16 * KiB)
    const r = recorder()
    const pipeline = new WritePipeline(pool, fileWrites(fd, { auto: true, short }).target, start, r.events)
    let at = 0
    for (let i = 0; at < data.length; i++) {
      while (pipeline.waiting) await r.nextWriteEnd()
      const t = pipeline.target(reads[i % reads.length] ?? 1)
      const m = Math.min(t.length, data.length - at)
      data.copy(t, 0, at, at + m)
      at += m
      pipeline.filled(m)
    }
    pipeline.flush()
    while (pipeline.busy) await r.nextWriteEnd()
    return { pool, r }
  }

  it("writes every byte appended, in order at its positions, with at most two buffers when reads wait", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 200 * KiB }),
        fc.nat({ max: 64 * KiB }),
        fc.array(fc.integer({ min: 1, max: 40 * KiB }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        async (size, start, reads, short) => {
          Fs.ftruncateSync(fd, 0)
          const data = makeContent(size, size)
          const { pool, r } = await feed(data, start, reads, short)
          assert.strictEqual(
            r.written.reduce((a, b) => a + b, 0),
            size
          )
          assert.deepStrictEqual(r.failures, [])
          const file = Fs.readFileSync(path)
          assert.strictEqual(file.length, start + size)
          assert.isTrue(file.subarray(start).equals(data), "the file differs from the bytes appended")
          assert.isAtMost(pool.allocated, 2)
          assert.strictEqual(pool.free.length, pool.allocated, "every buffer is back in the pool")
        }
      ),
      { numRuns: 40 }
    )
  })

  it("a full buffer waits in its reserve for the other's write; only a reserve overrun takes a third", () => {
    const pool = countingPool(16 * KiB)
    const writes = fileWrites(fd)
    const pipeline = new WritePipeline(pool, writes.target, 0, recorder().events)
    const reserve = 4 * KiB
    const fill = (n: number) => {
      const t = pipeline.target(n)
      assert.strictEqual(t.length, n)
      return pipeline.filled(n)
    }
    // Buffer A up to its reserve: written at once.
    assert.isTrue(fill(16 * KiB - reserve))
    assert.strictEqual(writes.started(), 1)
    // Buffer B up to its reserve while A is written: reads wait.
    assert.isFalse(fill(16 * KiB - reserve))
    assert.isTrue(pipeline.waiting)
    assert.strictEqual(pool.allocated, 2)
    // What still arrives lands in B's reserve…
    assert.strictEqual(pipeline.target(64 * KiB).length, reserve)
    assert.isFalse(fill(reserve - 1))
    assert.strictEqual(pool.allocated, 2)
    // …and only when even that is full is B queued and a third buffer taken.
    assert.isFalse(fill(1))
    pipeline.target(1)
    assert.strictEqual(pool.allocated, 3)
  })

  it("admit holds a write, and so the reads, until it resumes it", async () => {
    const writes = fileWrites(fd)
    writes.target.admitted = false
    const r = recorder()
    const pipeline = new WritePipeline(countingPool(16 * KiB), writes.target, 0, r.events)
    const data = makeContent(12 * KiB)
    pipeline.target(12 * KiB).set(data)
    assert.isFalse(pipeline.filled(12 * KiB), "a full buffer whose write is held: reads wait")
    assert.strictEqual(writes.started(), 0, "held by admit")
    writes.target.admitted = true
    for (const resume of writes.target.resumes.splice(0)) resume()
    assert.strictEqual(writes.started(), 1)
    const ended = r.nextWriteEnd()
    writes.complete()
    await ended
    assert.deepStrictEqual(r.written, [12 * KiB])
    assert.deepStrictEqual(r.ended, [true], "the write frees its buffer: reads go on")
    assert.isFalse(pipeline.waiting)
    assert.isTrue(Fs.readFileSync(path).equals(data))
  })

  it("after a failed write nothing more is written and every buffer goes back", async () => {
    const pool = countingPool(16 * KiB)
    const writes = fileWrites(fd, { failAt: 0 })
    const r = recorder()
    const pipeline = new WritePipeline(pool, writes.target, 0, r.events)
    pipeline.target(12 * KiB)
    pipeline.filled(12 * KiB)
    pipeline.target(12 * KiB)
    pipeline.filled(12 * KiB)
    const ended = r.nextWriteEnd()
    writes.complete()
    await ended
    assert.deepStrictEqual(r.failures, ["EIO: i/o error"])
    assert.deepStrictEqual(r.written, [])
    assert.isFalse(pipeline.busy)
    pipeline.target(4 * KiB)
    pipeline.filled(4 * KiB)
    pipeline.flush()
    assert.strictEqual(writes.started(), 1, "no write after the failure")
    assert.strictEqual(pool.given, pool.allocated)
    assert.strictEqual(Fs.fstatSync(fd).size, 0)
  })

  it("discard drops what was not sealed, unwritten", () => {
    const pool = countingPool(16 * KiB)
    const writes = fileWrites(fd)
    const pipeline = new WritePipeline(pool, writes.target, 0, recorder().events)
    pipeline.target(100)
    pipeline.filled(100)
    pipeline.discard()
    pipeline.flush()
    assert.strictEqual(writes.started(), 0)
    assert.strictEqual(pool.given, 1)
  })
})
