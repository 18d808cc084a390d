import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { nodeTransferFs, type TransferFsShape } from "../../src/transfer/TransferFs.ts"
import type { TransferRecord } from "../../src/transfer/TransferJournal.ts"
import { encodeMark, markCovers, markInterval, openMarkWriter, readMark } from "../../src/transfer/writtenMark.ts"

const record: TransferRecord = {
  fileId: "f",
  size: 1000,
  etag: '"v1"',
  lastModified: null,
  partialPath: ".dlsync/partial/f",
  segments: [
    { start: 0, end: 500, durable: 100 },
    { start: 500, end: 1000, durable: 50 }
  ],
  attempts: 0,
  lastError: null
}

// Written beyond the journal, and the second segment split since the last commit.
const segments = [
  { start: 0, end: 500, pos: 300, recv: 300 },
  { start: 500, end: 750, pos: 620, recv: 640 },
  { start: 750, end: 1000, pos: 800, recv: 800 }
]
const mark = encodeMark("boot-1", { size: 1000, etag: '"v1"', lastModified: null, segments })

/** The segments a resume takes from the mark beside `record`, as the engine decides. */
const segmentsFromMark = (text: string, boot: string | null, record: TransferRecord) => {
  const marked = readMark(text, boot, record.size)
  return marked !== undefined && markCovers(marked, record) ? marked.segments : undefined
}

describe("written marks", () => {
  it("resume from the written positions when intact, from this boot and for the same version", () => {
    assert.deepStrictEqual(
      segmentsFromMark(mark, "boot-1", record)?.map((s) => [s.start, s.end, s.pos]),
      [
        [0, 500, 300],
        [500, 750, 620],
        [750, 1000, 800]
      ]
    )
  })

  it("are ignored after a reboot, or where there is no boot id", () => {
    assert.isUndefined(segmentsFromMark(mark, "boot-2", record))
    assert.isUndefined(segmentsFromMark(mark, null, record))
  })

  it("are ignored when damaged: a changed byte, a cut line, not JSON", () => {
    assert.isUndefined(segmentsFromMark(mark.replace("300", "301"), "boot-1", record))
    assert.isUndefined(segmentsFromMark(mark.slice(0, 40), "boot-1", record))
    assert.isUndefined(segmentsFromMark("0 {\n", "boot-1", record))
    assert.isUndefined(segmentsFromMark("", "boot-1", record))
  })

  it("are ignored for another version, size or a version without validators", () => {
    assert.isUndefined(segmentsFromMark(mark, "boot-1", { ...record, etag: '"v2"' }))
    assert.isUndefined(segmentsFromMark(mark, "boot-1", { ...record, size: 999 }))
    const bare = encodeMark("boot-1", { size: 1000, etag: null, lastModified: null, segments })
    assert.isUndefined(segmentsFromMark(bare, "boot-1", { ...record, etag: null }))
  })

  it("are ignored when they do not cover every durable byte of the journal", () => {
    const behind = { ...record, segments: [{ start: 0, end: 1000, durable: 400 }] }
    assert.isUndefined(segmentsFromMark(mark, "boot-1", behind))
  })

  it("stand alone when no record was committed yet, with the version they were written for", () => {
    assert.deepStrictEqual(readMark(mark, "boot-1", 1000)?.etag, '"v1"')
    assert.deepStrictEqual(
      readMark(mark, "boot-1", 1000)?.segments.map((s) => s.pos),
      [300, 620, 800]
    )
    assert.isUndefined(readMark(mark, "boot-1", 999))
  })

  it("are ignored when their segments do not cover the file exactly", () => {
    const gap = encodeMark("boot-1", { size: 1000, etag: '"v1"', lastModified: null, segments: segments.slice(0, 2) })
    assert.isUndefined(segmentsFromMark(gap, "boot-1", record))
  })
})

describe("the mark writer", () => {
  const MiB = 1024 * 1024

  it("marks every 1/128 of a file, at most every 8 MiB", () => {
    assert.strictEqual(markInterval(128 * MiB), MiB)
    assert.strictEqual(markInterval(1000), 8)
    assert.strictEqual(markInterval(2048 * MiB), 8 * MiB)
    assert.strictEqual(markInterval(100 * 1024 * MiB), 8 * MiB)
  })

  /**
   * A writer of `every` bytes whose text is the current value of `state`, its file, and the
   * writes it started (counted when asked for: a mark is due at the `update` that makes it so).
   */
  const writer = async (every: number) => {
    const path = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-mark-")), "f~written")
    const state = { text: "", writes: 0 }
    const fs: TransferFsShape = {
      ...nodeTransferFs,
      writev: (fd, buffers, position, cb) => {
        state.writes++
        nodeTransferFs.writev(fd, buffers, position, cb)
      }
    }
    const mark = await openMarkWriter(fs, path, every, () => state.text)
    return { mark, state, onDisk: () => Fs.readFileSync(path, "utf8") }
  }

  it("writes once the written bytes reach its interval, counted from the last mark", async () => {
    const { mark, state, onDisk } = await writer(100)
    state.text = "a"
    mark.update(60)
    mark.update(39)
    assert.strictEqual(state.writes, 0, "99 bytes: not yet")
    await mark.flush()
    assert.strictEqual(onDisk(), "a", "the flush wrote it")
    state.text = "b"
    mark.update(99)
    assert.strictEqual(state.writes, 1, "99 bytes after the flush: not yet")
    mark.update(1)
    await mark.close()
    assert.strictEqual(onDisk(), "b", "the 100th byte wrote it (close waits for the write)")
  })

  it("a flush waits for the write in flight, then writes the state of that moment", async () => {
    const { mark, state, onDisk } = await writer(10)
    state.text = "first\n"
    mark.update(10)
    const flushed = mark.flush()
    state.text = "second\n"
    await flushed
    assert.strictEqual(onDisk().split("\n")[0], "second")
    await mark.close()
  })

  it("resolves flushes after close without writing", async () => {
    const { mark, state, onDisk } = await writer(10)
    state.text = "x"
    await mark.close()
    await mark.flush()
    mark.update(100)
    assert.strictEqual(onDisk(), "")
  })
})
