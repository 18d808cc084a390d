/**
 * Written marks: how far each segment's bytes were handed to the kernel, in a small file
 * beside the partial (`<partial>~written`), rewritten without fsync every `markInterval` bytes
 * written and at each durability commit (so it always covers what the journal calls durable).
 *
 * The journal holds what is durable (fsynced before it was saved: good after a power loss)
 * and is committed once per durability batch, so a killed process would fetch up to a batch
 * per file again. But a process that dies (SIGKILL, OOM killer, a crash) loses none of the
 * bytes it wrote: the kernel still holds those pages. So a restart within the same boot may
 * continue from the mark; after a reboot (power loss, kernel crash) the kernel's boot id
 * differs, the mark is ignored and only the journal counts.
 *
 * A mark is trusted only when it is intact (CRC), from this boot, for the same size and
 * validators as the journal record, covers the file exactly, and covers every byte the
 * record calls durable. A process killed before its first commit leaves a mark and no
 * record: the mark alone is trusted then (its validators go with the resumed requests'
 * If-Range, so another version still restarts from zero). It is removed before a restart
 * from zero, so it never describes the bytes of another version. Writing it never fails a
 * transfer: a mark is a hint.
 */
import * as Fs from "node:fs"
import { crc32 } from "node:zlib"
import type { DurableSegment, Segment } from "./segments.ts"
import { fromDurable, snapshotSegments } from "./segments.ts"
import type { TransferFsShape } from "./TransferFs.ts"
import type { TransferRecord } from "./TransferJournal.ts"

/** This boot's id (Linux); null elsewhere, which turns marks off. */
export const currentBootId = (): string | null => {
  try {
    return Fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null
  } catch {
    return null
  }
}

export const markPathFor = (partialAbs: string): string => `${partialAbs}~written`

interface MarkBody {
  readonly boot: string
  readonly size: number
  readonly etag: string | null
  readonly lastModified: string | null
  /** [start, end, written bytes from start] per segment. */
  readonly segments: ReadonlyArray<readonly [number, number, number]>
}

export interface MarkSubject {
  readonly size: number
  readonly etag: string | null
  readonly lastModified: string | null
  readonly segments: ReadonlyArray<Segment>
}

/** The mark's text: `<crc32 hex> <json>\n` (what follows the first newline is ignored). */
export const encodeMark = (boot: string, subject: MarkSubject): string => {
  const body: MarkBody = {
    boot,
    size: subject.size,
    etag: subject.etag,
    lastModified: subject.lastModified,
    segments: snapshotSegments(subject.segments).map((s) => [s.start, s.end, s.durable] as const)
  }
  const json = JSON.stringify(body)
  return `${crc32(json).toString(16)} ${json}\n`
}

/** What a trusted mark says: the version it was written for and how far each segment got. */
export interface Marked {
  readonly etag: string | null
  readonly lastModified: string | null
  readonly segments: Array<Segment>
}

/**
 * The mark's content when it is intact, from this boot, for a file of `size` with a known
 * validator, and its segments cover the file exactly; else undefined.
 */
export const readMark = (text: string, boot: string | null, size: number): Marked | undefined => {
  if (boot === null) return undefined
  const line = text.slice(0, text.indexOf("\n"))
  const space = line.indexOf(" ")
  const json = line.slice(space + 1)
  if (space <= 0 || crc32(json).toString(16) !== line.slice(0, space)) return undefined
  let body: MarkBody
  try {
    body = JSON.parse(json)
  } catch {
    return undefined
  }
  if (body.boot !== boot || body.size !== size) return undefined
  if (body.etag === null && body.lastModified === null) return undefined
  if (!Array.isArray(body.segments)) return undefined
  const written: Array<DurableSegment> = body.segments.map(([start, end, durable]) => ({ start, end, durable }))
  const segments = fromDurable(written, size)
  return segments === undefined ? undefined : { etag: body.etag, lastModified: body.lastModified, segments }
}

/** True when the mark is for the record's version and covers every byte the record calls durable. */
export const markCovers = (marked: Marked, record: TransferRecord): boolean => {
  if (marked.etag !== record.etag || marked.lastModified !== record.lastModified) return false
  const covers = (r: DurableSegment) =>
    r.durable === 0 || marked.segments.some((s) => s.start <= r.start && r.start + r.durable <= s.pos)
  return record.segments.every(covers)
}

/**
 * Bytes written between two marks: ≤ 1/128 of the file, never more than MARK_EVERY_MAX. A
 * killed process fetches again at most this much more than its buffers held. Each mark is a
 * JSON text and a write through libuv's pool: one per 384 KiB write batch cost a 2 GiB
 * download ≈ 10 % of its CPU (3.51 → 3.17 s without marks, 8 alternated runs over https).
 */
export const markInterval = (size: number): number => Math.min(MARK_EVERY_MAX, Math.ceil(size / 128))

/** 8 MiB: ≤ 256 marks for a file of 2 GiB, ≤ 0.4 % of it fetched again. */
const MARK_EVERY_MAX = 8 * 1024 * 1024

/** Keeps one transfer's mark up to date (openMarkWriter). */
export interface MarkWriter {
  /** Counts a completed write batch; writes the mark once `every` bytes went unmarked. */
  readonly update: (written: number) => void
  /**
   * Writes the mark now (after the write in flight); resolves once a mark of the state at the
   * call is written, or could not be: the committer's journal never gets ahead of the mark.
   */
  readonly flush: () => Promise<void>
  /** Waits for the write in flight, then closes; later calls return the same promise. */
  readonly close: () => Promise<void>
}

/** One write at a time: a mark due during a write is folded into the next one. */
export const openMarkWriter = async (
  fs: TransferFsShape,
  path: string,
  every: number,
  text: () => string | undefined
): Promise<MarkWriter> => {
  const fd = await fs.openPartial(path)
  let unmarked = 0
  let writing = false
  let again = false
  let closed = false
  /** Flushes waiting for the next write to complete. */
  let waiting: Array<() => void> = []
  let idle: (() => void) | undefined
  let closing: Promise<void> | undefined
  const write = () => {
    const t = closed ? undefined : text()
    const flushed = waiting
    waiting = []
    if (t === undefined) {
      for (const resolve of flushed) resolve()
      return idle?.()
    }
    writing = true
    again = false
    unmarked = 0
    fs.writev(fd, [Buffer.from(t)], 0, () => {
      writing = false
      for (const resolve of flushed) resolve()
      if (again) write()
      else idle?.()
    })
  }
  const due = () => {
    if (writing) again = true
    else write()
  }
  return {
    update: (written) => {
      unmarked += written
      if (!closed && unmarked >= every) due()
    },
    flush: () =>
      closed
        ? Promise.resolve()
        : new Promise((resolve) => {
            waiting.push(resolve)
            due()
          }),
    close: () => {
      closed = true
      closing ??= (async () => {
        if (writing) await new Promise<void>((resolve) => (idle = resolve))
        await fs.close(fd).catch(() => undefined)
      })()
      return closing
    }
  }
}
