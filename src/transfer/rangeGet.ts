/**
 * The byte path: one HTTP GET (ranged or whole) for one segment, written in place into the
 * partial file. Plain imperative Node code on undici's dispatcher/handler API, wrapped
 * once in an Effect by the engine.
 *
 *   socket ─► undici parser ─► onResponseData(chunk)
 *                                │ keep a reference to the chunk (no copy, no allocation)
 *                                │ bandwidth tokens taken; pause while in debt
 *                                ▼
 *                 batch ≥ 1 MiB ─► fs.writev(fd, chunks, pos)  (one write in flight per
 *                                │            segment, so `segment.pos` grows contiguously)
 *                                ▼
 *                        segment.pos += n ─► onWritten(n) (durability batch, progress)
 *
 * One batch is written while the next gathers; when that one is complete too, the response
 * is paused (TCP backpressure), never buffered further. Undici's body chunks are views of
 * the socket's read buffers, which Node does not reuse, so holding them until their write
 * ends is safe and saves a copy of every byte. Contracts:
 * - `segment.pos` only advances over bytes whose write completed; after any failure the
 *   bytes below it are valid content of the version the validators name.
 * - The request stops at `segment.end` even if that is lowered while it runs (work stealing).
 * - A response is checked before any byte is accepted: status, Content-Range (start,
 *   end, total), Content-Length, Content-Encoding and validators; anything that could
 *   splice two versions is a `restart` fault.
 * - A body shorter than promised is a `transient` fault, a longer one a `fatal` one.
 * - No header but Range, If-Range, Accept-Encoding and User-Agent is ever sent: the CDN
 *   never sees a credential, and redirects are returned to the caller, not followed here.
 */
import type { Dispatcher } from "undici"
import type { RateLimiter } from "./Bandwidth.ts"
import { cdnRequestHeaders, judgeResponse, type Validators } from "./judgeResponse.ts"
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
  /** Bytes gathered before one positional writev. */
  readonly batchBytes: number
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

export type RangeOutcome =
  | { readonly _tag: "Done" }
  | { readonly _tag: "Redirect"; readonly location: URL }
  /** The lean reader met a body framing it does not read (chunked…): ask again through undici. */
  | { readonly _tag: "Fallback" }

export interface RangeGet {
  readonly promise: Promise<RangeOutcome>
  /** Aborts the request; resolves once no write is in flight (the descriptor may then be closed). */
  readonly cancel: () => Promise<void>
}

export const rangeGet = (dispatcher: Dispatcher, spec: RangeGetSpec, segment: Segment, sink: RangeSink): RangeGet => {
  const handler = new RangeHandler(spec, segment, sink)
  const headers = cdnRequestHeaders(spec.ranged, segment.pos, segment.end, spec.ifRange, spec.userAgent)
  try {
    dispatcher.dispatch(
      {
        origin: spec.url.origin,
        path: spec.url.pathname + spec.url.search,
        method: "GET",
        headers,
        bodyTimeout: spec.idleTimeoutMs,
        headersTimeout: spec.idleTimeoutMs
      },
      handler
    )
  } catch (error) {
    handler.fail(faultFromError(error, "request"))
  }
  return { promise: handler.promise, cancel: () => handler.cancel() }
}

// ---------------------------------------------------------------------------------------

/** The reason given to undici when we end a body on purpose (segment end reached, cancel). */
const STOP = new Error("dlsync: stop")

type Mode = "headers" | "body" | "redirect" | "settling" | "settled"

class RangeHandler implements Dispatcher.DispatchHandler {
  readonly promise: Promise<RangeOutcome>
  private resolve!: (outcome: RangeOutcome) => void
  private reject!: (fault: TransferFault) => void

  private controller: Dispatcher.DispatchController | null = null
  private mode: Mode = "headers"
  private outcome: RangeOutcome | TransferFault | null = null
  private cancelled = false
  private readonly settledWaiters: Array<() => void> = []

  /** Next absolute byte position to receive, and the end the response promised. */
  private recv: number
  /** The end asked for at dispatch; `segment.end` may be lowered below it later. */
  private readonly requestedEnd: number
  private promisedEnd = 0
  private redirectTo: URL | null = null

  /** Received chunks not yet handed to a write, and complete batches waiting for one. */
  private gather: Array<Buffer> = []
  private gatherBytes = 0
  private readonly full: Array<Array<Buffer>> = []
  private writing = false
  private pausedForBuffers = false
  private pausedForRate = false
  private rateTimer: NodeJS.Timeout | null = null
  private readonly spec: RangeGetSpec
  private readonly segment: Segment
  private readonly sink: RangeSink

  constructor(spec: RangeGetSpec, segment: Segment, sink: RangeSink) {
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

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.cancelled || this.outcome !== null) controller.abort(STOP)
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | Array<string> | undefined>
  ): void {
    this.controller = controller
    if (this.mode !== "headers") return
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
    if (j._tag === "Body") {
      this.promisedEnd = j.promisedEnd
      this.mode = "body"
    } else if (j._tag === "Redirect") {
      this.redirectTo = j.location
      this.mode = "redirect"
    } else {
      this.outcome = j.fault
      this.mode = "settling"
      controller.abort(j.fault)
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode !== "body") return
    const end = Math.min(this.promisedEnd, this.segment.end)
    let n = chunk.length
    let stop = false
    if (this.recv + n > end) {
      if (end === this.promisedEnd) {
        this.outcome = fault("fatal", "the body is longer than promised")
        this.mode = "settling"
        controller.abort(this.outcome)
        return
      }
      // The segment's end was lowered by a split: the rest belongs to another worker.
      n = Math.max(0, end - this.recv)
      stop = true
    } else if (this.recv + n === end && end < this.promisedEnd) {
      stop = true
    }
    this.gatherChunk(chunk, n)
    this.recv += n
    this.segment.recv = this.recv
    const wait = this.sink.limiter.take(n)
    if (stop) {
      this.mode = "settling"
      this.outcome = { _tag: "Done" }
      this.flushTail()
      controller.abort(STOP)
      return
    }
    if (wait > 0 && !this.pausedForRate) {
      this.pausedForRate = true
      controller.pause()
      this.rateTimer = setTimeout(() => {
        this.rateTimer = null
        this.pausedForRate = false
        this.maybeResume()
      }, wait)
    }
  }

  onResponseEnd(): void {
    if (this.mode === "redirect") {
      this.mode = "settling"
      this.outcome = this.redirectTo === null ? null : { _tag: "Redirect", location: this.redirectTo }
      this.trySettle()
      return
    }
    if (this.mode !== "body") {
      this.trySettle()
      return
    }
    this.mode = "settling"
    this.outcome =
      this.recv >= Math.min(this.promisedEnd, this.segment.end)
        ? { _tag: "Done" }
        : fault("transient", `body ended at byte ${this.recv} of ${this.promisedEnd}`)
    this.flushTail()
    this.trySettle()
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.outcome === null) {
      this.outcome = this.cancelled ? fault("transient", "cancelled") : faultFromError(error, "CDN body")
    }
    // Bytes already received are valid: keep them, unless the response itself was refused.
    if (this.mode === "body") this.flushTail()
    this.mode = "settling"
    this.trySettle()
  }

  /** Fails before the request could be dispatched. */
  fail(fault: TransferFault): void {
    this.outcome = fault
    this.mode = "settling"
    this.trySettle()
  }

  cancel(): Promise<void> {
    if (this.mode === "settled") return Promise.resolve()
    this.cancelled = true
    if (this.outcome === null) this.outcome = fault("transient", "cancelled")
    this.controller?.abort(STOP)
    return new Promise((resolve) => {
      if (this.mode === "settled") resolve()
      else this.settledWaiters.push(resolve)
    })
  }

  // --- batches and writes --------------------------------------------------------------

  /** Keeps a reference to the received bytes (no copy) in the batch being gathered. */
  private gatherChunk(chunk: Buffer, n: number): void {
    if (n <= 0) return
    this.gather.push(n === chunk.length ? chunk : chunk.subarray(0, n))
    this.gatherBytes += n
    if (this.gatherBytes >= this.sink.batchBytes) {
      this.full.push(this.gather)
      this.gather = []
      this.gatherBytes = 0
      this.startWrite()
    }
    // One batch being written and another complete: stop reading until the write ends.
    if (this.full.length > 0 && !this.pausedForBuffers) {
      this.pausedForBuffers = true
      this.controller?.pause()
    }
  }

  private flushTail(): void {
    if (this.gatherBytes > 0) {
      this.full.push(this.gather)
      this.gather = []
      this.gatherBytes = 0
      this.startWrite()
    }
  }

  private readonly resumeWrites = (): void => this.startWrite()

  private startWrite(): void {
    if (this.writing) return
    const next = this.full[0]
    if (next === undefined) return
    if (this.outcome instanceof TransferFault && this.outcome.kind !== "transient") {
      // A refused or failed response: its remaining bytes are not written.
      this.full.length = 0
      this.trySettle()
      return
    }
    if (!this.sink.admit(this.resumeWrites)) return
    this.full.shift()
    this.writing = true
    this.writeSome(next)
  }

  private writeSome(batch: Array<Buffer>): void {
    this.sink.fs.writev(this.sink.fd, batch, this.segment.pos, (error, written) => {
      if (error === null && written > 0) {
        this.segment.pos += written
        this.sink.onWritten(written)
        const rest = afterBytes(batch, written)
        if (rest.length > 0) return this.writeSome(rest)
      }
      this.writing = false
      if (error !== null || written <= 0) {
        const fault = faultFromError(error ?? new Error("write wrote nothing"), "write")
        if (!(this.outcome instanceof TransferFault) || this.outcome.kind === "transient") this.outcome = fault
        this.full.length = 0
        this.gather = []
        this.gatherBytes = 0
        if (this.mode === "body") {
          this.mode = "settling"
          this.controller?.abort(fault)
        }
        return this.trySettle()
      }
      if (this.full.length > 0) this.startWrite()
      if (this.pausedForBuffers && this.full.length === 0) {
        this.pausedForBuffers = false
        this.maybeResume()
      }
      this.trySettle()
    })
  }

  private maybeResume(): void {
    if (this.mode === "body" && !this.pausedForBuffers && !this.pausedForRate) this.controller?.resume()
  }

  private trySettle(): void {
    if (this.mode !== "settling" || this.writing || this.full.length > 0) return
    this.mode = "settled"
    // Bytes received but not written are gone with this request.
    this.segment.recv = this.segment.pos
    if (this.rateTimer !== null) clearTimeout(this.rateTimer)
    this.gather = []
    this.gatherBytes = 0
    const outcome = this.outcome ?? fault("transient", "the response ended without an outcome")
    if (outcome instanceof TransferFault) this.reject(outcome)
    else this.resolve(outcome)
    for (const w of this.settledWaiters.splice(0)) w()
  }
}

/** The part of `batch` after its first `n` bytes. */
const afterBytes = (batch: ReadonlyArray<Buffer>, n: number): Array<Buffer> => {
  const rest: Array<Buffer> = []
  let skip = n
  for (const b of batch) {
    if (skip >= b.length) {
      skip -= b.length
      continue
    }
    rest.push(skip > 0 ? b.subarray(skip) : b)
    skip = 0
  }
  return rest
}
