/**
 * One ranged (or whole) GET of the byte path (leanGet.ts), as the segment workers
 * (segmentWorkers.ts) ask for it: what to request, where its bytes go, what it answers.
 */
import type { RateLimiter } from "./Bandwidth.ts"
import type { Validators } from "./judgeResponse.ts"
import type { TransferFault } from "./TransferFault.ts"
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
