/**
 * HTTP/1.1 chunked framing, decoded in place: the lean reader's reads land in its write
 * buffers as they came off the wire, and `decode` strips the chunk-size lines and CRLFs,
 * moving the data bytes down over them. A read that carries no framing moves nothing.
 */
export class ChunkedDecoder {
  private state: "size" | "ext" | "sizeLf" | "data" | "dataCr" | "dataLf" | "trailer" | "trailerLf" | "done" = "size"
  /** The chunk size being read, then the data bytes left in the chunk. */
  private left = 0
  private digits = 0
  private trailerLine = 0
  /** Bytes that followed the terminating chunk (the connection is then unusable). */
  surplus = 0

  /** The last chunk and the trailer have been read. */
  get done(): boolean {
    return this.state === "done"
  }

  /**
   * Decodes `buf[from, to)` in place; returns the end of the data bytes, which now start at
   * `from`, or -1 when the framing is malformed.
   */
  decode(buf: Buffer, from: number, to: number): number {
    let w = from
    let i = from
    while (i < to) {
      if (this.state === "data") {
        const k = Math.min(this.left, to - i)
        if (w !== i) buf.copyWithin(w, i, i + k)
        w += k
        i += k
        this.left -= k
        if (this.left === 0) this.state = "dataCr"
        continue
      }
      if (this.state === "done") {
        this.surplus += to - i
        return w
      }
      const c = buf[i++] ?? 0
      switch (this.state) {
        case "size": {
          const d = hexValue(c)
          if (d >= 0 && this.digits < 12) {
            this.left = this.left * 16 + d
            this.digits++
          } else if (this.digits > 0 && (c === SEMI || c === SP || c === TAB)) this.state = "ext"
          else if (this.digits > 0 && c === CR) this.state = "sizeLf"
          else return -1
          break
        }
        case "ext":
          if (c === CR) this.state = "sizeLf"
          break
        case "sizeLf":
          if (c !== LF) return -1
          this.digits = 0
          this.state = this.left === 0 ? "trailer" : "data"
          this.trailerLine = 0
          break
        case "dataCr":
          if (c !== CR) return -1
          this.state = "dataLf"
          break
        case "dataLf":
          if (c !== LF) return -1
          this.state = "size"
          break
        case "trailer":
          if (c === CR) this.state = "trailerLf"
          else this.trailerLine++
          break
        case "trailerLf":
          if (c !== LF) return -1
          this.state = this.trailerLine === 0 ? "done" : "trailer"
          this.trailerLine = 0
          break
      }
    }
    return w
  }
}

const CR = 13
const LF = 10
const SP = 32
const TAB = 9
const SEMI = 59

const hexValue = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1
