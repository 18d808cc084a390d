/**
 * The byte path: one ranged (or whole) GET for one segment, on a kept-alive TCP or TLS
 * socket whose reads land directly in the buffers then written to the partial file — no
 * per-read allocation, no copy, no stream plumbing, no promise per chunk. Plain imperative
 * Node code, wrapped once in an Effect by the engine (segmentWorkers.ts).
 *
 *   kernel/TLS ─(read into buffer tail, Node `onread`)─► buffer A fills ─► fs.writev(fd, A, pos)
 *                                                        buffer B fills ─► waits for A's write
 *                                                        both busy ──────► socket paused;
 *                                                        TLS's last reads ► B's reserve
 *
 * A request holds two buffers. A buffer counts as full at its reserve (its last quarter, at
 * most 128 KiB): when the other is still being written the socket pauses, and what TLS had
 * already decrypted (it hands that over after the pause) lands in the reserve instead of a
 * third buffer. Only a reserve overrun takes a third.
 *
 * It speaks the HTTP/1.1 a CDN file response needs: a status line, headers and a body
 * framed by Content-Length (read exactly, so the socket is reused), chunked (decoded in
 * place, chunkedBody.ts) or the connection's close. Contracts:
 * - `segment.pos` only advances over bytes whose write completed; after any failure the
 *   bytes below it are valid content of the version the validators name.
 * - The request stops at `segment.end` even if that is lowered while it runs (work stealing).
 * - A response is checked before any byte is accepted (judgeResponse.ts): anything that
 *   could splice two versions is a `restart` fault.
 * - A body shorter than promised is a `transient` fault, a longer one a `fatal` one.
 * - No header but Host, Range, If-Range, Accept-Encoding and User-Agent is ever sent: the
 *   CDN never sees a credential, and redirects are returned to the caller, not followed here.
 */
import type { RateLimiter } from "./Bandwidth.ts"
import { ChunkedDecoder } from "./chunkedBody.ts"
import {
  cdnRequestHeaders,
  type Headers,
  header,
  judgeResponse,
  parseLength,
  type Validators
} from "./judgeResponse.ts"
import type { LeanConn, LeanPool, LeanReader } from "./leanPool.ts"
import { parseHead } from "./leanResponseHead.ts"
import type { Segment } from "./segments.ts"
import { fault, faultFromError, TransferFault } from "./TransferFault.ts"
import type { TransferFsShape } from "./TransferFs.ts"

export interface RangeGetSpec {
  readonly url: URL
  /** Send `Range: bytes=pos-(end-1)`; false asks for the whole file with a plain GET (pos must be 0). */
  readonly ranged: boolean
  /** The expected size of the whole file. */
  readonly size: number
  /** Validator sent as If-Range (an ETag or an HTTP date), or null. */
  readonly ifRange: string | null
  readonly idleTimeoutMs: number
  readonly userAgent: string
}

export interface RangeSink {
  readonly fd: number
  readonly fs: TransferFsShape
  readonly limiter: RateLimiter
  /** Told after each completed write (durability batching, progress). */
  readonly onWritten: (bytes: number) => void
  /**
   * Asked before each write: false holds the write (and so, through the buffers, the
   * socket) until `resume` is called — durability backpressure when fsync lags.
   */
  readonly admit: (resume: () => void) => boolean
  /** Sees the response's validators before any byte is accepted; a fault refuses the response. */
  readonly onValidators: (validators: Validators) => TransferFault | undefined
}

export type RangeOutcome = { readonly _tag: "Done" } | { readonly _tag: "Redirect"; readonly location: URL }

export interface RangeGet {
  readonly promise: Promise<RangeOutcome>
  /** Aborts the request; resolves once no write is in flight (the descriptor may then be closed). */
  readonly cancel: () => Promise<void>
}

/** Starts a GET for `segment`, with buffers and connections from `pool`. */
export const leanGet = (pool: LeanPool, spec: RangeGetSpec, segment: Segment, sink: RangeSink): RangeGet => {
  const exchange = new LeanExchange(pool, spec, segment, sink)
  exchange.start(true)
  return { promise: exchange.promise, cancel: () => exchange.cancel() }
}

// ---------------------------------------------------------------------------------------

/** Response heads larger than this are refused; the head buffer is this size (pooled by V8's slab). */
const HEAD_MAX = 16 * 1024
/**
 * A buffer's reserve, at most: after a pause, TLS hands over what it already decrypted
 * from the last socket read (Node reads 64 KiB at a time) and a record left from the one
 * before (up to 16 KiB): up to 80 KiB.
 */
const RESERVE_MAX = 128 * 1024

/** How often per idle timeout the idle timer looks for moves: a stall is found within a quarter of it late. */
const IDLE_LOOKS = 4

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

  private head: Buffer | null = null
  private headLen = 0
  private readonly requestedEnd: number
  private recv: number
  private promisedEnd = 0
  private keepAlive = true
  /** The body's framing: null reads Content-Length bytes (or to the close); else chunks. */
  private chunked: ChunkedDecoder | null = null
  /** The body is framed by Content-Length, so reads stop exactly at its end. */
  private lengthFramed = true

  /** The buffer being filled by reads, and the one being written (two, see above). */
  private cur: Buffer | null = null
  private curLen = 0
  /** The first file position of `cur`. */
  private curPos = 0
  private readonly sealed: Array<{ buffer: Buffer; length: number; pos: number }> = []
  private writing = false
  private pausedForBuffers = false
  private pausedForRate = false
  private rateTimer: NodeJS.Timeout | null = null
  private idleTimer: NodeJS.Timeout | null = null
  /**
   * Moves of the response (bytes landed, the socket resumed) since the idle timer last
   * looked, and how many of its looks in a row saw none. The hot path only counts: moving a
   * timer on every read cost 4 % of the whole process's CPU (perf, 2 GiB over https), and
   * reading a clock half that.
   */
  private moves = 0
  private quietLooks = 0
  private readonly pool: LeanPool
  private readonly spec: RangeGetSpec
  private readonly segment: Segment
  private readonly sink: RangeSink
  /** The bytes at the end of each buffer kept for reads that arrive after a pause. */
  private readonly reserve: number

  constructor(pool: LeanPool, spec: RangeGetSpec, segment: Segment, sink: RangeSink) {
    this.pool = pool
    this.reserve = Math.min(RESERVE_MAX, pool.bufferSize >> 2)
    this.spec = spec
    this.segment = segment
    this.sink = sink
    this.recv = segment.pos
    this.requestedEnd = segment.end
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
  }

  /** Sends the request; on a reused socket that turns out dead, once more on a fresh one. */
  start(mayReuse: boolean): void {
    const { conn, reused } = mayReuse ? this.pool.connection(this.spec.url) : this.freshConnection()
    this.conn = conn
    this.reusedConn = reused
    conn.busy(this)
    const headers = cdnRequestHeaders(
      this.spec.ranged,
      this.segment.pos,
      this.segment.end,
      this.spec.ifRange,
      this.spec.userAgent
    )
    let text = `GET ${this.spec.url.pathname}${this.spec.url.search} HTTP/1.1\r\nhost: ${this.spec.url.host}\r\n`
    for (const [k, v] of Object.entries(headers)) text += `${k}: ${v}\r\n`
    conn.socket.write(`${text}\r\n`)
    // A kept-alive socket was left paused by its previous response.
    conn.socket.resume()
    this.armIdle()
  }

  /** Where the next socket read lands (remembered, to recognize reads that landed elsewhere). */
  readTarget(): Buffer {
    if (this.pausedForBuffers) {
      // Node holds on to this target until its next read, whenever that comes: by then the
      // buffer around a target in `cur` may be sealed and being written. What TLS still hands
      // over, and the first read after resuming, land here and are copied (onCopied).
      this.expected = null
      return this.scratch()
    }
    this.expected = this.target()
    return this.expected
  }

  private expected: Buffer | null = null

  private target(): Buffer {
    if (this.phase === "head") {
      this.head ??= Buffer.allocUnsafe(HEAD_MAX)
      return this.head.subarray(this.headLen, Math.min(this.head.length, HEAD_MAX))
    }
    if (this.phase !== "body") return this.scratch()
    if (this.cur === null) {
      this.cur = this.pool.takeBuffer()
      this.curLen = 0
      this.curPos = this.recv
    }
    // Reads stop at the reserve unless paused. Never past a Content-Length body: the
    // socket stays clean for the next request.
    const room = (this.pausedForBuffers ? this.cur.length : this.cur.length - this.reserve) - this.curLen
    const left = this.lengthFramed ? this.promisedEnd - this.recv : room
    return this.cur.subarray(this.curLen, this.curLen + Math.max(1, Math.min(room, left)))
  }

  /** A socket read of `n` bytes into `landed`; false pauses the socket. */
  onRead(n: number, landed: Buffer): boolean {
    return landed === this.expected ? this.onLanded(n) : this.onCopied(n, landed)
  }

  /**
   * A read into a scratch buffer: the connection's at the start of an exchange, or this
   * exchange's while paused. Copied into the real targets, as many as it takes.
   */
  private onCopied(n: number, landed: Buffer): boolean {
    let go = true
    for (let at = 0; at < n && (this.phase === "head" || this.phase === "body"); ) {
      const t = this.target()
      const m = Math.min(n - at, t.length)
      if (m <= 0) break
      landed.copy(t, 0, at, at + m)
      at += m
      go = this.onLanded(m)
    }
    return go
  }

  /** `n` bytes landed in the target. */
  private onLanded(n: number): boolean {
    this.gotBytes = true
    this.armIdle()
    if (this.phase === "head") return this.onHead(n)
    if (this.phase !== "body") return false
    return this.onBody(n)
  }

  onSocketEnd(error: Error | null): void {
    if (this.phase === "settled") return
    this.clearIdle()
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
    if (this.phase === "body") this.sealCurrent()
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

  // --- head ----------------------------------------------------------------------------

  private onHead(n: number): boolean {
    const head = this.head
    if (head === null) return false
    this.headLen += n
    const end = head.subarray(0, this.headLen).indexOf("\r\n\r\n")
    if (end < 0) {
      if (this.headLen >= Math.min(head.length, HEAD_MAX)) this.refuse(fault("fatal", "CDN response headers too large"))
      return this.phase === "head"
    }
    const parsed = parseHead(head.toString("latin1", 0, end))
    if (parsed === undefined) {
      this.refuse(fault("transient", "CDN sent a malformed response head"))
      return false
    }
    const { status, headers } = parsed
    this.keepAlive = !/\bclose\b/i.test(String(headers.connection ?? "")) && parsed.version === "1.1"
    const j = judgeResponse(
      {
        url: this.spec.url,
        ranged: this.spec.ranged,
        size: this.spec.size,
        from: this.recv,
        to: this.requestedEnd,
        onValidators: this.sink.onValidators
      },
      status,
      headers
    )
    if (j._tag === "Refused") {
      this.refuse(j.fault)
      return false
    }
    if (j._tag === "Redirect") {
      this.outcome = { _tag: "Redirect", location: j.location }
      this.phase = "settling"
      this.dropConnection()
      this.trySettle()
      return false
    }
    const framing = bodyFraming(headers, j.promisedEnd - this.recv)
    if (framing instanceof TransferFault) {
      this.refuse(framing)
      return false
    }
    if (framing === "chunked") this.chunked = new ChunkedDecoder()
    this.lengthFramed = framing === "length"
    if (framing === "close") this.keepAlive = false
    this.promisedEnd = j.promisedEnd
    this.phase = "body"
    // Body bytes that came with the head.
    const extra = this.headLen - (end + 4)
    this.headLen = 0
    if (extra > 0) {
      const target = this.target()
      // (A Content-Length body's target ends at its last byte.)
      const m = Math.min(extra, target.length)
      head.copy(target, 0, end + 4, end + 4 + m)
      // Node's next read target is asked after this callback returns.
      this.head = null
      return this.onBody(m)
    }
    this.head = null
    return true
  }

  // --- body ----------------------------------------------------------------------------

  private onBody(n: number): boolean {
    const cur = this.cur
    if (cur === null || n <= 0) return true
    let got = n
    if (this.chunked !== null) {
      const end = this.chunked.decode(cur, this.curLen, this.curLen + n)
      if (end < 0) return this.endBody(fault("transient", "CDN sent a malformed chunked body"))
      got = end - this.curLen
    }
    if (this.recv + got > this.promisedEnd) {
      // Nothing of a response that breaks its promise is written.
      return this.endBody(fault("fatal", "the body is longer than promised"), false)
    }
    const stopAt = Math.min(this.promisedEnd, this.segment.end)
    const keep = Math.max(0, Math.min(got, stopAt - this.recv))
    this.curLen += keep
    this.recv += keep
    this.segment.recv = this.recv
    const wait = this.sink.limiter.take(keep)
    if (this.recv < stopAt && this.chunked?.done === true) {
      return this.endBody(fault("transient", `body ended at byte ${this.recv} of ${this.promisedEnd}`))
    }
    if (this.recv >= stopAt) {
      // Done with this body: the whole promised body (socket reusable when its framing is
      // read to the end) or a lowered end.
      const framingRead = this.chunked === null ? this.lengthFramed : this.chunked.done && this.chunked.surplus === 0
      const clean = this.recv === this.promisedEnd && this.keepAlive && framingRead
      this.outcome = { _tag: "Done" }
      this.phase = "settling"
      this.sealCurrent()
      this.clearIdle()
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
    // Written at once when the other buffer is free; else it waits, unless even its reserve is full.
    if (this.curIsFull() && (!this.otherIsBusy() || this.curLen === this.cur?.length)) this.sealCurrent()
    let go = true
    if (this.buffersBusy()) {
      // A full buffer waits for the other's write (or for the durability gate): read nothing more.
      this.pausedForBuffers = true
      go = false
    }
    if (wait > 0) {
      this.pausedForRate = true
      this.rateTimer = setTimeout(() => {
        this.rateTimer = null
        this.pausedForRate = false
        this.maybeResume()
      }, wait)
      go = false
    }
    if (!go) this.clearIdle()
    return go
  }

  /** `cur` is filled up to its reserve. */
  private curIsFull(): boolean {
    return this.cur !== null && this.curLen >= this.cur.length - this.reserve
  }

  /** The buffer other than `cur` is being written, or sealed and waiting for its write. */
  private otherIsBusy(): boolean {
    return this.writing || this.sealed.length > 0
  }

  /** No buffer free to read into: reading waits for a write. */
  private buffersBusy(): boolean {
    return this.sealed.length > 0 || (this.curIsFull() && this.otherIsBusy())
  }

  private sealCurrent(): void {
    if (this.cur !== null && this.curLen > 0) {
      this.sealed.push({ buffer: this.cur, length: this.curLen, pos: this.curPos })
      this.cur = null
      this.curLen = 0
      this.startWrite()
    } else if (this.cur !== null) {
      this.pool.giveBuffer(this.cur)
      this.cur = null
    }
  }

  private readonly resumeWrites = (): void => this.startWrite()

  private startWrite(): void {
    if (this.writing) return
    const next = this.sealed[0]
    if (next === undefined) return
    if (!this.sink.admit(this.resumeWrites)) return
    this.sealed.shift()
    this.writing = true
    this.writeSome(next.buffer, 0, next.length, next.pos)
  }

  private writeSome(buffer: Buffer, offset: number, length: number, pos: number): void {
    this.sink.fs.writev(this.sink.fd, [buffer.subarray(offset, length)], pos, (error, written) => {
      if (error === null && written > 0) {
        this.segment.pos += written
        this.sink.onWritten(written)
        if (offset + written < length) return this.writeSome(buffer, offset + written, length, pos + written)
      }
      this.writing = false
      this.pool.giveBuffer(buffer)
      if (error !== null || written <= 0) {
        const f = faultFromError(error ?? new Error("write wrote nothing"), "write")
        if (!(this.outcome instanceof TransferFault) || this.outcome.kind === "transient") this.outcome = f
        for (const s of this.sealed.splice(0)) this.pool.giveBuffer(s.buffer)
        if (this.phase === "body") {
          this.phase = "settling"
          this.dropConnection()
        }
        return this.trySettle()
      }
      if (this.sealed.length > 0) this.startWrite()
      else if (this.curIsFull()) this.sealCurrent()
      if (this.pausedForBuffers && !this.buffersBusy()) {
        this.pausedForBuffers = false
        this.maybeResume()
      }
      this.trySettle()
    })
  }

  private maybeResume(): void {
    if (this.phase !== "body" || this.pausedForBuffers || this.pausedForRate) return
    this.armIdle()
    this.conn?.socket.resume()
  }

  // --- ending --------------------------------------------------------------------------

  /** Ends the body with `f`, writing what was received unless `keepCurrent` is false. */
  private endBody(f: TransferFault, keepCurrent = true): false {
    if (keepCurrent) this.sealCurrent()
    else if (this.cur !== null) {
      this.pool.giveBuffer(this.cur)
      this.cur = null
      this.curLen = 0
    }
    this.outcome = f
    this.phase = "settling"
    this.dropConnection()
    this.trySettle()
    return false
  }

  private refuse(f: TransferFault): void {
    this.outcome = f
    this.phase = "settling"
    this.dropConnection()
    this.trySettle()
  }

  private dropConnection(): void {
    this.clearIdle()
    const conn = this.conn
    this.conn = null
    conn?.destroy()
  }

  private trySettle(): void {
    if (this.phase !== "settling" || this.writing || this.sealed.length > 0) return
    this.phase = "settled"
    this.clearIdle()
    if (this.rateTimer !== null) clearTimeout(this.rateTimer)
    this.segment.recv = this.segment.pos
    if (this.cur !== null) this.pool.giveBuffer(this.cur)
    this.head = null
    this.cur = null
    const outcome = this.outcome ?? fault("transient", "the response ended without an outcome")
    if (outcome instanceof TransferFault) this.reject(outcome)
    else this.resolve(outcome)
    for (const w of this.settledWaiters.splice(0)) w()
  }

  /** The response moved: it fails as stalled once it has not for idleTimeoutMs (up to a quarter more). */
  private armIdle(): void {
    this.moves++
    this.idleTimer ??= this.nextIdleLook()
  }

  private nextIdleLook(): NodeJS.Timeout {
    return setTimeout(this.onIdleLook, this.spec.idleTimeoutMs / IDLE_LOOKS)
  }

  private readonly onIdleLook = (): void => {
    this.quietLooks = this.moves === 0 ? this.quietLooks + 1 : 0
    this.moves = 0
    if (this.quietLooks < IDLE_LOOKS) {
      this.idleTimer = this.nextIdleLook()
      return
    }
    this.idleTimer = null
    if (this.phase !== "head" && this.phase !== "body") return
    this.endBody(fault("transient", `stalled: no byte for ${this.spec.idleTimeoutMs} ms`), this.phase === "body")
  }

  private clearIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer)
    this.idleTimer = null
    this.quietLooks = 0
  }

  private freshConnection(): { readonly conn: LeanConn; readonly reused: boolean } {
    return { conn: this.pool.fresh(this.spec.url), reused: false }
  }

  private scratchBuffer: Buffer | null = null
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

/** How the body is framed, checked against the bytes the judged response promised. */
const bodyFraming = (headers: Headers, promised: number): "length" | "chunked" | "close" | TransferFault => {
  const encoding = header(headers, "transfer-encoding")
  if (encoding !== undefined) {
    return encoding.trim().toLowerCase() === "chunked"
      ? "chunked"
      : fault("fatal", `CDN sent a body in transfer-encoding ${encoding}`)
  }
  const length = parseLength(header(headers, "content-length"))
  if (length === undefined) return "close"
  return length === promised ? "length" : fault("restart", "Content-Length disagrees with the range asked for")
}
