/**
 * Written marks: how far each segment's bytes were handed to the kernel, in a small file
 * beside the partial (`<partial>~written`), rewritten without fsync after every write batch.
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
 * Keeps one transfer's mark up to date: `update()` after each write batch writes the
 * current state, one write at a time (a call during a write is folded into the next one).
 */
export const openMarkWriter = async (
  fs: TransferFsShape,
  path: string,
  text: () => string | undefined
): Promise<{ readonly update: () => void; readonly close: () => Promise<void> }> => {
  const fd = await fs.openPartial(path)
  let writing = false
  let again = false
  let closed = false
  let idle: (() => void) | undefined
  let closing: Promise<void> | undefined
  const write = () => {
    const t = closed ? undefined : text()
    if (t === undefined) return idle?.()
    writing = true
    again = false
    fs.writev(fd, [Buffer.from(t)], 0, () => {
      writing = false
      if (again) write()
      else idle?.()
    })
  }
  return {
    update: () => {
      if (closed) return
      if (writing) again = true
      else write()
    },
    /** Waits for the write in flight, then closes; later calls return the same promise. */
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
