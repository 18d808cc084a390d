/**
 * An HTTP/1.1 response read from bytes, with no I/O: the byte path (leanGet.ts) lets socket
 * reads land where this parser says, tells it how many bytes landed, and gets data back —
 * the head, then the body's data bytes as a range of the buffer they landed in.
 *
 *   headTarget() ─► headRead(n) ─► ResponseHead (interim 1xx heads skipped) | ParseError | more
 *   beginBody()  ─► Framing (Content-Length, chunked, close) | ParseError
 *   leftover()   ─► the body bytes that came with the head (copy them to where body bytes go)
 *   body(buf, from, to) ─► end of the data bytes, now at [from, end); chunk framing is removed
 *                          in place (data moved down over it), so a read carrying none moves nothing
 *   ended()      ─► the connection closed: a close-delimited body is complete, others truncated
 *
 * Contracts, for any split of the bytes into reads: the same head and the same data bytes;
 * every malformed input gives a `ParseError` (never a throw), at the latest when the
 * connection ends; a head never takes more than `maxHead` bytes, chunk extensions and
 * trailers never more than that each, so no byte stream keeps the parser waiting for ever.
 * A Content-Length body takes no byte past its length: the rest is `surplus`, as is anything
 * after the last chunk.
 */
import {
  type Framing,
  framingOf,
  isInterim,
  type ParseError,
  parseError,
  parseHeadText,
  type ResponseHead
} from "./responseHead.ts"

/** Response heads larger than this are refused. */
export const HEAD_MAX = 16 * 1024

export class ResponseParser {
  /** The head, once read; null before. */
  head: ResponseHead | null = null
  /** The first failure; the parser accepts nothing after it. */
  error: ParseError | null = null
  /** Bytes received after the end of the body (the connection cannot carry another request). */
  surplus = 0

  private readonly maxHead: number
  private headBuf: Buffer | null = null
  private headLen = 0
  /** Head bytes checked for line endings so far, and where the current line starts. */
  private scanned = 0
  private lineStart = 0
  /** End of the head in `headBuf` (past its empty line), once found. */
  private headEnd = -1
  private interims = 0

  private framing = NONE
  /** Content-Length: bytes left. Chunked: the chunk size being read, then its data bytes left. */
  private left = 0
  private chunkState = SIZE
  private digits = 0
  /** Bytes of the current chunk-size line's extensions, or of the trailer section. */
  private extra = 0
  private trailerLine = 0

  constructor(maxHead = HEAD_MAX) {
    this.maxHead = maxHead
  }

  /** Where the next head bytes land (its length is the room left for the head). */
  headTarget(): Buffer {
    this.headBuf ??= Buffer.allocUnsafe(this.maxHead)
    return this.headBuf.subarray(this.headLen)
  }

  /** `n` bytes landed in `headTarget()`: the head once complete, a failure, or undefined for more. */
  headRead(n: number): ResponseHead | ParseError | undefined {
    const buf = this.headBuf
    if (this.head !== null || this.error !== null) return this.error ?? this.head ?? undefined
    if (buf === null) return undefined
    this.headLen += n
    while (true) {
      const end = this.scanHead(buf)
      if (end === -2) return this.fail(parseError("line-ending", "a CR or LF alone in the response head"))
      if (end === -3) return this.fail(parseError("header", "a NUL byte in the response head"))
      if (end < 0) {
        if (this.headLen >= this.maxHead) {
          return this.fail(parseError("head-too-large", `response head over ${this.maxHead} bytes`))
        }
        return undefined
      }
      const head = parseHeadText(buf.toString("latin1", 0, end - 4))
      if ("_tag" in head) return this.fail(head)
      if (!isInterim(head.status)) {
        this.head = head
        this.headEnd = end
        return head
      }
      if (++this.interims > MAX_INTERIMS) {
        return this.fail(parseError("status-line", `more than ${MAX_INTERIMS} interim responses`))
      }
      // The next head starts where this one ended.
      buf.copyWithin(0, end, this.headLen)
      this.headLen -= end
      this.scanned = 0
      this.lineStart = 0
    }
  }

  /** The body's framing, from the head; the parser then reads body bytes. */
  beginBody(): Framing | ParseError {
    if (this.head === null) return this.fail(parseError("status-line", "no response head yet"))
    const framing = framingOf(this.head)
    if ("_tag" in framing && framing._tag === "ParseError") return this.fail(framing)
    switch (framing._tag) {
      case "Length":
        this.framing = framing.length === 0 ? DONE : LENGTH
        this.left = framing.length
        break
      case "Chunked":
        this.framing = CHUNKED
        break
      case "Close":
        this.framing = CLOSE
        break
    }
    return framing
  }

  /** The bytes after the head that came with it (body bytes, to be passed to `body`). */
  leftover(): Buffer {
    return this.headBuf === null || this.headEnd < 0
      ? Buffer.alloc(0)
      : this.headBuf.subarray(this.headEnd, this.headLen)
  }

  /** Lets the head's buffer go (after `leftover` was consumed). */
  dropHeadBuffer(): void {
    this.headBuf = null
  }

  /** The most bytes the next body read may take: the rest of a Content-Length body, else any. */
  bodyRoom(): number {
    return this.framing === LENGTH ? this.left : Number.POSITIVE_INFINITY
  }

  /** The body's framing has ended (its length read, or its last chunk and trailers). */
  get done(): boolean {
    return this.framing === DONE
  }

  /** Done, on a persistent connection, with nothing after the body: the connection can carry the next request. */
  get reusable(): boolean {
    return this.framing === DONE && this.surplus === 0 && this.head?.persistent === true
  }

  /**
   * Body bytes `buf[from, to)`: returns the end of the data bytes among them, which now
   * start at `from`, or -1 on a failure (`error`).
   */
  body(buf: Buffer, from: number, to: number): number {
    const n = to - from
    switch (this.framing) {
      case LENGTH:
        if (n < this.left) {
          this.left -= n
          return to
        }
        this.surplus += n - this.left
        this.framing = DONE
        return from + this.left
      case CLOSE:
        return to
      case CHUNKED:
        return this.chunks(buf, from, to)
      case DONE:
        this.surplus += n
        return from
      default:
        this.fail(parseError("status-line", "body bytes before the head"))
        return -1
    }
  }

  /** The connection ended (no more bytes): null when the response is complete, else why not. */
  ended(): ParseError | null {
    if (this.error !== null) return this.error
    if (this.framing === CLOSE) {
      this.framing = DONE
      return null
    }
    if (this.framing === DONE) return null
    const short =
      this.head === null
        ? "before the response head"
        : this.framing === LENGTH
          ? `${this.left} bytes short of Content-Length`
          : this.framing === CHUNKED
            ? "before the last chunk"
            : "before the body"
    return this.fail(parseError("truncated", `the connection ended ${short}`))
  }

  // ---------------------------------------------------------------------------------------

  private fail(error: ParseError): ParseError {
    this.error ??= error
    this.framing = FAILED
    return this.error
  }

  /**
   * Scans the head bytes not yet checked: the end of the head (past its empty line), -1 for
   * more, -2 for a bad line ending, -3 for a NUL.
   */
  private scanHead(buf: Buffer): number {
    for (let i = this.scanned; i < this.headLen; i++) {
      const c = buf[i]
      const afterCr = i > 0 && buf[i - 1] === CR && i - 1 >= this.lineStart
      if (afterCr !== (c === LF)) return -2
      if (c === 0) return -3
      if (c !== LF) continue
      if (i - 1 === this.lineStart) {
        this.scanned = i + 1
        return i + 1
      }
      this.lineStart = i + 1
    }
    this.scanned = this.headLen
    return -1
  }

  /** Chunked framing decoded in place (see the module comment). */
  private chunks(buf: Buffer, from: number, to: number): number {
    let w = from
    let i = from
    while (i < to) {
      if (this.chunkState === DATA) {
        const k = Math.min(this.left, to - i)
        if (w !== i) buf.copyWithin(w, i, i + k)
        w += k
        i += k
        this.left -= k
        if (this.left === 0) this.chunkState = DATA_CR
        continue
      }
      if (this.framing === DONE) {
        this.surplus += to - i
        return w
      }
      const c = buf[i++] ?? 0
      if (!this.chunkByte(c)) return -1
    }
    return w
  }

  /** One framing byte of a chunked body; false on a failure. */
  private chunkByte(c: number): boolean {
    switch (this.chunkState) {
      case SIZE: {
        const d = hexValue(c)
        if (d >= 0 && this.digits < MAX_SIZE_DIGITS) {
          this.left = this.left * 16 + d
          this.digits++
        } else if (this.digits > 0 && (c === SEMI || c === SP || c === HTAB)) this.chunkState = EXT
        else if (this.digits > 0 && c === CR) this.chunkState = SIZE_LF
        else return this.chunkFailure("chunk", `a chunk-size line with ${describeByte(c)}`)
        return true
      }
      case EXT:
        if (c === CR) this.chunkState = SIZE_LF
        else if (c === LF) return this.chunkFailure("chunk", "an LF alone in a chunk extension")
        else if (++this.extra > this.maxHead) return this.chunkFailure("chunk-too-large", "chunk extensions too long")
        return true
      case SIZE_LF:
        if (c !== LF) return this.chunkFailure("chunk", "a chunk-size line not ended by CRLF")
        this.digits = 0
        this.extra = 0
        this.trailerLine = 0
        this.chunkState = this.left === 0 ? TRAILER : DATA
        return true
      case DATA_CR:
        if (c !== CR) return this.chunkFailure("chunk", "chunk data longer than its size")
        this.chunkState = DATA_LF
        return true
      case DATA_LF:
        if (c !== LF) return this.chunkFailure("chunk", "chunk data not ended by CRLF")
        this.chunkState = SIZE
        return true
      case TRAILER:
        if (c === CR) this.chunkState = TRAILER_LF
        else if (c === LF) return this.chunkFailure("chunk", "an LF alone in the trailers")
        else if (++this.extra > this.maxHead) return this.chunkFailure("chunk-too-large", "trailers too long")
        else this.trailerLine++
        return true
      case TRAILER_LF:
        if (c !== LF) return this.chunkFailure("chunk", "a trailer line not ended by CRLF")
        if (this.trailerLine === 0) this.framing = DONE
        this.chunkState = TRAILER
        this.trailerLine = 0
        return true
      default:
        return true
    }
  }

  private chunkFailure(reason: "chunk" | "chunk-too-large", message: string): false {
    this.fail(parseError(reason, message))
    return false
  }
}

// ---------------------------------------------------------------------------------------

/** Interim (1xx) heads skipped before the final one, at most. */
const MAX_INTERIMS = 8
/** Chunk sizes up to 2^48 bytes (12 hex digits). */
const MAX_SIZE_DIGITS = 12

// Body framing states.
const NONE = 0
const LENGTH = 1
const CHUNKED = 2
const CLOSE = 3
const DONE = 4
const FAILED = 5

// Chunked framing states.
const SIZE = 0
const EXT = 1
const SIZE_LF = 2
const DATA = 3
const DATA_CR = 4
const DATA_LF = 5
const TRAILER = 6
const TRAILER_LF = 7

const CR = 13
const LF = 10
const SP = 32
const HTAB = 9
const SEMI = 59

const hexValue = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1

const describeByte = (c: number): string => (c >= 33 && c <= 126 ? `'${String.fromCharCode(c)}'` : `byte ${c}`)
