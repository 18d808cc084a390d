/**
 * The byte path: one ranged (or whole) GET for one segment, on a kept-alive TCP or TLS
 * socket whose reads land directly in the buffers then written to the partial file — no
 * per-read allocation, no copy, no stream plumbing, no promise per chunk. Plain imperative
 * Node code, wrapped once in an Effect by the engine (segmentWorkers.ts). This file is the
 * glue of its parts:
 *
 *   kernel/TLS ─(read into the target, Node `onread`)─► ResponseParser (responseParser.ts):
 *                                                       head ─► judgeResponse ─► framing
 *                                                       body ─► data bytes, in place
 *                                                            ─► WritePipeline (writePipeline.ts):
 *                                                               two buffers ─► fs.writev(fd, pos)
 *   IdleWatchdog (idleWatchdog.ts) ─► stalled: cut; the rate limiter's pause; a dead
 *   kept-alive socket ─► the request sent again on a fresh one
 *
 * Contracts:
 * - `segment.pos` only advances over bytes whose write completed; after any failure the
 *   bytes below it are valid content of the version the validators name.
 * - The request stops at `segment.end` even if that is lowered while it runs (work stealing).
 * - A response is checked before any byte is accepted (judgeResponse.ts): anything that
 *   could splice two versions is a `restart` fault.
 * - A body shorter than promised is a `transient` fault, a longer one a `fatal` one.
 * - No header but Host, Range, If-Range, Accept-Encoding and User-Agent is ever sent: the
 *   CDN never sees a credential, and redirects are returned to the caller, not followed here.
 * - A socket goes back to the pool only when its response was read exactly to its end.
 */

import { nodeTimers, type Timer } from "../pacing/systemClock.ts"
import { IdleWatchdog } from "./idleWatchdog.ts"
import { cdnRequest, judgeResponse } from "./judgeResponse.ts"
import type { LeanConn, LeanPool, LeanReader } from "./leanPool.ts"
import type { RangeGet, RangeGetSpec, RangeOutcome, RangeSink } from "./rangeGet.ts"
import { isParseError } from "./responseHead.ts"
import { ResponseParser } from "./responseParser.ts"
import type { Segment } from "./segments.ts"
import { fault, faultFromError, faultFromParseError, TransferFault } from "./TransferFault.ts"
import { WritePipeline } from "./writePipeline.ts"

/** Starts a GET for `segment`, with buffers and connections from `pool`. */
export const leanGet = (pool: LeanPool, spec: RangeGetSpec, segment: Segment, sink: RangeSink): RangeGet => {
  const exchange = new LeanExchange(pool, spec, segment, sink)
  exchange.start(true)
  return { promise: exchange.promise, cancel: () => exchange.cancel() }
}

// ---------------------------------------------------------------------------------------

type Phase = "head" | "body" | "settling" | "settled"

class LeanExchange implements LeanReader {
  readonly promise: Promise<RangeOutcome>
  private resolve!: (o: RangeOutcome) => void
  private reject!: (f: TransferFault) => void
  private conn: LeanConn | null = null
  private phase: Phase = "head"
  private outcome: RangeOutcome | TransferFault | null = null
  private readonly settledWaiters: Array<() => void> = []
  private reusedConn = false
  private gotBytes = false

  private readonly parser = new ResponseParser()
  private readonly pipeline: WritePipeline
  private readonly watchdog: IdleWatchdog
  private readonly requestedEnd: number
  private recv: number
  private promisedEnd = 0
  /** Bytes of the read being handed over not yet given to the body: any left at its end came after it. */
  private unread = 0
  private pausedForRate = false
  private rateTimer: Timer | null = null
  /** The target Node was last given (reads that land elsewhere landed in a scratch buffer). */
  private expected: Buffer | null = null
  private scratchBuffer: Buffer | null = null
  private readonly pool: LeanPool
  private readonly spec: RangeGetSpec
  private readonly segment: Segment
  private readonly sink: RangeSink

  constructor(pool: LeanPool, spec: RangeGetSpec, segment: Segment, sink: RangeSink) {
    this.pool = pool
    this.spec = spec
    this.segment = segment
    this.sink = sink
    this.recv = segment.pos
    this.requestedEnd = segment.end
    this.pipeline = new WritePipeline(pool, sink, segment.pos, {
      written: (n) => {
        segment.pos += n
        sink.onWritten(n)
      },
      failed: (error) => this.onWriteFailed(error),
      writeEnded: (freed) => {
        if (freed) this.maybeResume()
        this.trySettle()
      }
    })
    this.watchdog = new IdleWatchdog(spec.idleTimeoutMs, () => this.onStall())
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
  }

  /** Sends the request; on a reused socket that turns out dead, once more on a fresh one. */
  start(mayReuse: boolean): void {
    const { conn, reused } = mayReuse
      ? this.pool.connection(this.spec.url)
      : { conn: this.pool.fresh(this.spec.url), reused: false }
    this.conn = conn
    this.reusedConn = reused
    conn.busy(this)
    const { url, ranged, ifRange, userAgent } = this.spec
    conn.socket.write(cdnRequest(url, ranged, this.segment.pos, this.segment.end, ifRange, userAgent))
    // A kept-alive socket was left paused by its previous response.
    conn.socket.resume()
    this.watchdog.moved()
  }

  /** Where the next socket read lands (remembered, to recognize reads that landed elsewhere). */
  readTarget(): Buffer {
    if (this.pipeline.waiting) {
      // Node holds on to this target until its next read, whenever that comes: by then the
      // buffer around a target in the pipeline may be sealed and being written. What TLS still
      // hands over, and the first read after resuming, land here and are copied (onCopied).
      this.expected = null
      return this.scratch()
    }
    this.expected = this.target()
    return this.expected
  }

  /** A socket read of `n` bytes into `landed`; false pauses the socket. */
  onRead(n: number, landed: Buffer): boolean {
    return landed === this.expected ? this.onLanded(n, landed) : this.onCopied(n, landed)
  }

  onSocketEnd(error: Error | null): void {
    if (this.phase === "settled") return
    this.watchdog.stop()
    // This socket is done for: its later events (end, close) must not reach this exchange.
    this.dropConnection()
    if (this.phase === "head" && this.reusedConn && !this.gotBytes && this.outcome === null) {
      // A kept-alive socket the server had closed: ask again on a new one.
      this.reusedConn = false
      this.start(false)
      return
    }
    if (this.outcome === null) {
      this.outcome =
        this.phase === "body"
          ? fault(
              "transient",
              `body ended at byte ${this.recv} of ${this.promisedEnd}${error ? `: ${error.message}` : ""}`
            )
          : error !== null
            ? faultFromError(error, `CDN ${this.spec.url.host}`)
            : fault("transient", "CDN closed the connection before answering")
    }
    if (this.phase === "body") this.pipeline.flush()
    this.phase = "settling"
    this.trySettle()
  }

  cancel(): Promise<void> {
    if (this.phase === "settled") return Promise.resolve()
    if (this.outcome === null) this.outcome = fault("transient", "cancelled")
    this.phase = "settling"
    this.dropConnection()
    this.trySettle()
    return new Promise((resolve) => {
      if (this.phase === "settled") resolve()
      else this.settledWaiters.push(resolve)
    })
  }

  // --- reads -----------------------------------------------------------------------------

  private target(): Buffer {
    if (this.phase === "head") return this.parser.headTarget()
    if (this.phase !== "body") return this.scratch()
    // Never past a Content-Length body: the socket stays clean for the next request.
    return this.pipeline.target(this.parser.bodyRoom())
  }

  /**
   * A read into a scratch buffer: the connection's at the start of an exchange, or this
   * exchange's while paused. Copied into the real targets, as many as it takes.
   */
  private onCopied(n: number, landed: Buffer): boolean {
    return this.handOver(landed, 0, n, 0)
  }

  /** Copies `from[at, end)` into targets and hands each over; `after` more bytes follow these. */
  private handOver(from: Buffer, at: number, end: number, after: number): boolean {
    let go = true
    while (at < end && (this.phase === "head" || this.phase === "body")) {
      const t = this.target()
      const m = Math.min(end - at, t.length)
      if (m <= 0) break
      from.copy(t, 0, at, at + m)
      at += m
      this.unread = end - at + after
      go = this.onLanded(m, t)
    }
    this.unread = after
    return go
  }

  /** `n` bytes landed at the start of `target`. */
  private onLanded(n: number, target: Buffer): boolean {
    this.gotBytes = true
    this.watchdog.moved()
    if (this.phase === "head") return this.onHead(n)
    if (this.phase !== "body") return false
    return this.onBody(target, n)
  }

  // --- head ------------------------------------------------------------------------------

  private onHead(n: number): boolean {
    const head = this.parser.headRead(n)
    if (head === undefined) return true
    if (isParseError(head)) return this.refuse(faultFromParseError(head))
    const j = judgeResponse(
      {
        url: this.spec.url,
        ranged: this.spec.ranged,
        size: this.spec.size,
        from: this.recv,
        to: this.requestedEnd,
        onValidators: this.sink.onValidators
      },
      head.status,
      head.headers
    )
    if (j._tag === "Refused") return this.refuse(j.fault)
    if (j._tag === "Redirect") {
      this.outcome = { _tag: "Redirect", location: j.location }
      return this.refuse(null)
    }
    const framing = this.parser.beginBody()
    if (isParseError(framing)) return this.refuse(faultFromParseError(framing))
    if (framing._tag === "Length" && framing.length !== j.promisedEnd - this.recv) {
      return this.refuse(fault("restart", "Content-Length disagrees with the range asked for"))
    }
    this.promisedEnd = j.promisedEnd
    this.phase = "body"
    // Body bytes that came with the head (Node asks for its next read target after this returns).
    const extra = this.parser.leftover()
    this.parser.dropHeadBuffer()
    return this.handOver(extra, 0, extra.length, this.unread)
  }

  // --- body ------------------------------------------------------------------------------

  private onBody(target: Buffer, n: number): boolean {
    if (n <= 0) return true
    const got = this.parser.body(target, 0, n)
    const malformed = this.parser.error
    if (malformed !== null) return this.endBody(faultFromParseError(malformed))
    if (this.recv + got > this.promisedEnd) {
      // Nothing of a response that breaks its promise is written.
      return this.endBody(fault("fatal", "the body is longer than promised"), false)
    }
    const stopAt = Math.min(this.promisedEnd, this.segment.end)
    const keep = Math.max(0, Math.min(got, stopAt - this.recv))
    this.recv += keep
    this.segment.recv = this.recv
    const free = this.pipeline.filled(keep)
    const wait = this.sink.limiter.take(keep)
    if (this.recv < stopAt && this.parser.done) {
      return this.endBody(fault("transient", `body ended at byte ${this.recv} of ${this.promisedEnd}`))
    }
    if (this.recv >= stopAt) return this.finish()
    let go = free
    if (wait > 0) {
      this.pausedForRate = true
      this.rateTimer = nodeTimers.after(wait, this.afterRatePause)
      go = false
    }
    if (!go) this.watchdog.stop()
    return go
  }

  /**
   * Done with this body: the whole promised body (the socket reused when it was read exactly
   * to its end) or a lowered end.
   */
  private finish(): false {
    const clean = this.recv === this.promisedEnd && this.parser.reusable && this.unread === 0
    this.outcome = { _tag: "Done" }
    this.phase = "settling"
    this.pipeline.flush()
    this.watchdog.stop()
    const conn = this.conn
    this.conn = null
    if (conn !== null) {
      if (clean) {
        conn.exchange = null
        this.pool.release(conn)
      } else conn.destroy()
    }
    this.trySettle()
    return false
  }

  private readonly afterRatePause = (): void => {
    this.rateTimer = null
    this.pausedForRate = false
    this.maybeResume()
  }

  private maybeResume(): void {
    if (this.phase !== "body" || this.pipeline.waiting || this.pausedForRate) return
    this.watchdog.moved()
    this.conn?.socket.resume()
  }

  private onWriteFailed(error: Error): void {
    const f = faultFromError(error, "write")
    if (!(this.outcome instanceof TransferFault) || this.outcome.kind === "transient") this.outcome = f
    if (this.phase === "body") {
      this.phase = "settling"
      this.dropConnection()
    }
  }

  private onStall(): void {
    if (this.phase !== "head" && this.phase !== "body") return
    this.endBody(fault("transient", `stalled: no byte for ${this.spec.idleTimeoutMs} ms`), this.phase === "body")
  }

  // --- ending ----------------------------------------------------------------------------

  /** Ends the body with `f`, writing what was received unless `keepCurrent` is false. */
  private endBody(f: TransferFault, keepCurrent = true): false {
    if (keepCurrent) this.pipeline.flush()
    else this.pipeline.discard()
    this.outcome = f
    return this.refuse(null)
  }

  /** Ends the exchange with `f` (null: with the outcome already set), dropping its socket. */
  private refuse(f: TransferFault | null): false {
    if (f !== null) this.outcome = f
    this.phase = "settling"
    this.dropConnection()
    this.trySettle()
    return false
  }

  private dropConnection(): void {
    this.watchdog.stop()
    const conn = this.conn
    this.conn = null
    conn?.destroy()
  }

  private trySettle(): void {
    if (this.phase !== "settling" || this.pipeline.busy) return
    this.phase = "settled"
    this.watchdog.stop()
    this.rateTimer?.cancel()
    this.segment.recv = this.segment.pos
    this.pipeline.discard()
    this.parser.dropHeadBuffer()
    const outcome = this.outcome ?? fault("transient", "the response ended without an outcome")
    if (outcome instanceof TransferFault) this.reject(outcome)
    else this.resolve(outcome)
    for (const w of this.settledWaiters.splice(0)) w()
  }

  /**
   * One TLS record's plaintext (16 KiB, what Node hands over per read): after a pause
   * for buffers TLS still hands over the rest of what it decrypted, ≈ 20 KiB each time,
   * which a 4 KiB scratch took in as many calls (2 GiB over https: 25,000 calls on top of
   * 126,000 reads into targets; with 16 KiB, 10,000, copying 8 % of the bytes instead of 5 %).
   */
  private scratch(): Buffer {
    this.scratchBuffer ??= Buffer.allocUnsafe(16 * 1024)
    return this.scratchBuffer
  }
}
