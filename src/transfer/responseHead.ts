/**
 * An HTTP/1.1 response head as text (status line and header lines, RFC 9112 §4–6), and the
 * body framing it declares. Pure; the byte-level scanning (line endings, size) is
 * responseParser.ts's.
 */

/** Response headers by lower-cased name; a repeated header's values in order, as a list. */
export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface ResponseHead {
  readonly version: "1.0" | "1.1"
  readonly status: number
  readonly reason: string
  readonly headers: Headers
  /** The connection may carry another request after this response (HTTP/1.1 without `Connection: close`). */
  readonly persistent: boolean
}

/** How a body ends: after `length` bytes, at the last chunk, or when the connection closes. */
export type Framing =
  | { readonly _tag: "Length"; readonly length: number }
  | { readonly _tag: "Chunked" }
  | { readonly _tag: "Close" }

export type ParseErrorReason =
  /** Not `HTTP/1.x NNN [reason]`. */
  | "status-line"
  /** A header line that is not `token: value`, or a NUL in the head. */
  | "header"
  /** A CR not followed by LF, or an LF not preceded by CR. */
  | "line-ending"
  | "head-too-large"
  /** Content-Length and Transfer-Encoding both, lengths that disagree or are not numbers, a coding other than chunked. */
  | "framing"
  /** A chunk-size line or the CRLF after a chunk's data. */
  | "chunk"
  /** Chunk extensions or trailers beyond their bound. */
  | "chunk-too-large"
  /** The connection ended before the body's framing did. */
  | "truncated"

/** Why bytes are not an acceptable response; `message` names what was seen. */
export interface ParseError {
  readonly _tag: "ParseError"
  readonly reason: ParseErrorReason
  readonly message: string
}

export const parseError = (reason: ParseErrorReason, message: string): ParseError => ({
  _tag: "ParseError",
  reason,
  message
})

export const isParseError = (value: unknown): value is ParseError =>
  typeof value === "object" && value !== null && "_tag" in value && value._tag === "ParseError"

/** Parses a head's text: the lines before the empty one, CRLF-separated (their endings already checked). */
export const parseHeadText = (text: string): ResponseHead | ParseError => {
  const lines = text.split("\r\n")
  const statusLine = lines[0] ?? ""
  const m = STATUS_LINE.exec(statusLine)
  if (m === null) return parseError("status-line", `not an HTTP/1.x status line: ${printable(statusLine)}`)
  const version = m[1] === "0" ? "1.0" : "1.1"
  const headers: Record<string, string | Array<string>> = {}
  let last: string | undefined
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] ?? ""
    const first = line.charCodeAt(0)
    if ((first === SP || first === HTAB) && last !== undefined) {
      // obs-fold: a continuation of the previous value, read as one space (RFC 9112 §5.2).
      appendToLast(headers, last, line.trim())
      continue
    }
    const colon = line.indexOf(":")
    const name = colon > 0 ? line.slice(0, colon) : ""
    if (!TOKEN.test(name)) return parseError("header", `not a header line: ${printable(line)}`)
    const key = name.toLowerCase()
    const value = line.slice(colon + 1).trim()
    const prev = headers[key]
    headers[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
    last = key
  }
  const connection = headerList(headers, "connection")
  const persistent = version === "1.1" && !connection.some((t) => t.toLowerCase() === "close")
  return { version, status: Number(m[2]), reason: m[3] ?? "", headers, persistent }
}

/** A status that only announces the final response (100 Continue, 103 Early Hints…): skipped. */
export const isInterim = (status: number): boolean => status >= 100 && status < 200 && status !== 101

/**
 * How the body of a response to a GET is framed (RFC 9112 §6.3). Both Content-Length and
 * Transfer-Encoding, or lengths that disagree, are refused: a sign of response splitting.
 */
export const framingOf = (head: ResponseHead): Framing | ParseError => {
  if (head.status === 204 || head.status === 304 || (head.status >= 100 && head.status < 200)) {
    return { _tag: "Length", length: 0 }
  }
  const codings = headerList(head.headers, "transfer-encoding")
  const lengths = headerList(head.headers, "content-length")
  if (codings.length > 0) {
    if (lengths.length > 0) return parseError("framing", "both Content-Length and Transfer-Encoding")
    if (codings.length === 1 && codings[0]?.toLowerCase() === "chunked") return { _tag: "Chunked" }
    return parseError("framing", `a body in transfer-encoding ${codings.join(", ")}`)
  }
  if (lengths.length === 0) return { _tag: "Close" }
  const first = lengths[0] ?? ""
  if (!DIGITS.test(first) || lengths.some((l) => l !== first)) {
    return parseError("framing", `Content-Length ${printable(lengths.join(", "))}`)
  }
  return { _tag: "Length", length: Number(first) }
}

// ---------------------------------------------------------------------------------------

const SP = 32
const HTAB = 9
/** `HTTP/1.x`, a three-digit status, then the end or a space and the reason phrase. */
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?:$| (.*)$)/
/** RFC 9110 §5.6.2 token: a header name, with no space before the colon. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** At most 15 digits: lengths stay exact in a double. */
const DIGITS = /^\d{1,15}$/

/** Every comma-separated element of a header's values, trimmed, empty ones dropped. */
const headerList = (headers: Headers, name: string): Array<string> => {
  const v = headers[name]
  if (v === undefined) return []
  const values = typeof v === "string" ? [v] : v
  return values.flatMap((x) => x.split(",").map((e) => e.trim())).filter((e) => e !== "")
}

const appendToLast = (headers: Record<string, string | Array<string>>, key: string, more: string): void => {
  const prev = headers[key]
  if (Array.isArray(prev)) prev[prev.length - 1] = `${prev[prev.length - 1] ?? ""} ${more}`
  else headers[key] = `${prev ?? ""} ${more}`
}

/** At most 80 characters of `text`, control characters shown as `?`: safe for a log line. */
const printable = (text: string): string =>
  JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text).replace(/\\u00[0-7][0-9a-f]/g, "?")
