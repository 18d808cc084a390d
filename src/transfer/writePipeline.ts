/**
 * The byte path's write side: body bytes land in reused buffers, and each full buffer is
 * written to the file with one positional write, one write at a time, in file order.
 *
 *   reads ─► cur fills (to its reserve) ─► sealed ─► admit? ─► fs.writev(fd, buffer, pos) ─► written(n)
 *            the other buffer is written ◄──────────────────────────────────┘  buffer back to the pool
 *            both busy: `waiting` (the reader pauses its socket);
 *            what arrives after the pause lands in the reserve
 *
 * A request holds two buffers. A buffer counts as full at its reserve (its last quarter, at
 * most 128 KiB): when the other is still being written, reads wait, and what TLS had
 * already decrypted (it hands that over after the pause) lands in the reserve instead of a
 * third buffer. Only a reserve overrun takes a third.
 *
 * Contracts:
 * - Bytes are written in the order they were appended, at consecutive file positions from
 *   the starting one; `written` reports them in that order, only once their write completed.
 * - `admit` is asked before each write; false holds it (and through the buffers, the reads)
 *   until the resume it was given is called: durability backpressure.
 * - After a failed write nothing more is written and every buffer goes back to the pool.
 */
import type { TransferFsShape } from "./TransferFs.ts"

/** Reused buffers of one size. */
export interface BufferPool {
  readonly bufferSize: number
  readonly takeBuffer: () => Buffer
  readonly giveBuffer: (buffer: Buffer) => void
}

/** The file the pipeline writes into. */
export interface WriteTarget {
  readonly fd: number
  readonly fs: Pick<TransferFsShape, "writev">
  /** Asked before each write: false holds it until `resume` is called. */
  readonly admit: (resume: () => void) => boolean
}

export interface PipelineEvents {
  /** `n` more bytes are in the file, after those reported before. */
  readonly written: (n: number) => void
  /** A write failed: nothing more is written. */
  readonly failed: (error: Error) => void
  /** A write ended (after `written` or `failed`); `freed`: reads that waited may go on. */
  readonly writeEnded: (freed: boolean) => void
}

export class WritePipeline {
  /** No buffer is free to read into: reads wait for a write (the reader pauses). */
  waiting = false
  private readonly pool: BufferPool
  private readonly file: WriteTarget
  private readonly events: PipelineEvents
  /** The bytes at the end of each buffer kept for reads that arrive after a pause. */
  private readonly reserve: number
  /** The buffer being filled, its length and its first file position. */
  private cur: Buffer | null = null
  private curLen = 0
  private curPos: number
  /** The file position of the next byte appended. */
  private nextPos: number
  private readonly sealed: Array<{ readonly buffer: Buffer; readonly length: number; readonly pos: number }> = []
  private writing = false
  private broken = false

  constructor(pool: BufferPool, file: WriteTarget, position: number, events: PipelineEvents) {
    this.pool = pool
    this.file = file
    this.events = events
    this.reserve = Math.min(RESERVE_MAX, pool.bufferSize >> 2)
    this.curPos = position
    this.nextPos = position
  }

  /**
   * Where the next bytes land, at most `max` of them: the free end of the buffer being
   * filled, up to its reserve (into it while `waiting`).
   */
  target(max: number): Buffer {
    let cur = this.cur
    if (cur === null) {
      cur = this.pool.takeBuffer()
      this.cur = cur
      this.curLen = 0
      this.curPos = this.nextPos
    }
    const room = (this.waiting ? cur.length : cur.length - this.reserve) - this.curLen
    return cur.subarray(this.curLen, this.curLen + Math.max(1, Math.min(room, max)))
  }

  /**
   * `n` bytes were appended at the start of the last target (its data bytes: framing
   * removed). Returns false when reads must wait for a write (`waiting`).
   */
  filled(n: number): boolean {
    this.curLen += n
    this.nextPos += n
    // Written at once when the other buffer is free; else it waits, unless even its reserve is full.
    if (this.curIsFull() && (!this.otherIsBusy() || this.curLen === this.cur?.length)) this.seal()
    if (this.buffersBusy()) this.waiting = true
    return !this.waiting
  }

  /** Writes what the buffer being filled holds (the end of the body). */
  flush(): void {
    this.seal()
  }

  /** Drops what the buffer being filled holds, unwritten. */
  discard(): void {
    if (this.cur !== null) this.pool.giveBuffer(this.cur)
    this.cur = null
    this.curLen = 0
  }

  /** A write is in flight or queued. */
  get busy(): boolean {
    return this.writing || this.sealed.length > 0
  }

  // ---------------------------------------------------------------------------------------

  /** The buffer being filled is filled up to its reserve. */
  private curIsFull(): boolean {
    return this.cur !== null && this.curLen >= this.cur.length - this.reserve
  }

  /** The other buffer is being written, or sealed and waiting for its write. */
  private otherIsBusy(): boolean {
    return this.writing || this.sealed.length > 0
  }

  /** No buffer free to read into. */
  private buffersBusy(): boolean {
    return this.sealed.length > 0 || (this.curIsFull() && this.otherIsBusy())
  }

  private seal(): void {
    const cur = this.cur
    if (cur === null) return
    this.cur = null
    if (this.curLen > 0 && !this.broken) {
      this.sealed.push({ buffer: cur, length: this.curLen, pos: this.curPos })
      this.curLen = 0
      this.startWrite()
    } else {
      this.curLen = 0
      this.pool.giveBuffer(cur)
    }
  }

  private readonly resumeWrites = (): void => this.startWrite()

  private startWrite(): void {
    if (this.writing || this.broken) return
    const next = this.sealed[0]
    if (next === undefined) return
    if (!this.file.admit(this.resumeWrites)) return
    this.sealed.shift()
    this.writing = true
    this.writeSome(next.buffer, 0, next.length, next.pos)
  }

  private writeSome(buffer: Buffer, offset: number, length: number, pos: number): void {
    this.file.fs.writev(this.file.fd, [buffer.subarray(offset, length)], pos, (error, written) => {
      if (error === null && written > 0) {
        this.events.written(written)
        if (offset + written < length) return this.writeSome(buffer, offset + written, length, pos + written)
      }
      this.writing = false
      this.pool.giveBuffer(buffer)
      if (error !== null || written <= 0) {
        this.broken = true
        for (const s of this.sealed.splice(0)) this.pool.giveBuffer(s.buffer)
        this.events.failed(error ?? new Error("write wrote nothing"))
        return this.events.writeEnded(false)
      }
      if (this.sealed.length > 0) this.startWrite()
      else if (this.curIsFull()) this.seal()
      const freed = this.waiting && !this.buffersBusy()
      if (freed) this.waiting = false
      this.events.writeEnded(freed)
    })
  }
}

/**
 * A buffer's reserve, at most: after a pause, TLS hands over what it already decrypted
 * from the last socket read (Node reads 64 KiB at a time) and a record left from the one
 * before (up to 16 KiB): up to 80 KiB.
 */
const RESERVE_MAX = 128 * 1024
