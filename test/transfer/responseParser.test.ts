/**
 * The byte path's HTTP/1.1 response parser, fed bytes as the byte path feeds it: each read
 * copied to where the parser (or, for the body, the buffer being filled) says, in any split.
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { type ParseError, type ParseErrorReason, parseError } from "../../src/transfer/responseHead.ts"
import { HEAD_MAX, ResponseParser } from "../../src/transfer/responseParser.ts"

interface Parsed {
  readonly status: number | null
  readonly headers: Readonly<Record<string, unknown>> | null
  readonly body: Buffer
  readonly error: ParseError | null
  /** The response ended before the connection did (a length or chunked body). */
  readonly completeBeforeEnd: boolean
  readonly reusable: boolean
  readonly surplus: number
  /** Head bytes the parser took in before answering. */
  readonly headBytes: number
}

/** Feeds `wire` cut at `cuts` (positions), then the connection's end. Never throws for the parser. */
const parse = (wire: Uint8Array, cuts: ReadonlyArray<number> = []): Parsed => {
  const parser = new ResponseParser()
  const out = Buffer.alloc(wire.length)
  let outLen = 0
  let inBody = false
  let headBytes = 0
  let failed: ParseError | null = null
  const feedBody = (bytes: Uint8Array) => {
    if (bytes.length === 0 || failed !== null) return
    out.set(bytes, outLen)
    const end = parser.body(out, outLen, outLen + bytes.length)
    if (end < 0) failed = parser.error ?? parseError("chunk", "no error given")
    else outLen = end
  }
  const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b)
  let from = 0
  for (const to of [...points, wire.length]) {
    let at = from
    while (at < to && failed === null) {
      if (inBody) {
        feedBody(wire.subarray(at, to))
        at = to
        continue
      }
      const target = parser.headTarget()
      const m = Math.min(target.length, to - at)
      target.set(wire.subarray(at, at + m))
      at += m
      headBytes += m
      const head = parser.headRead(m)
      if (head === undefined) continue
      if ("_tag" in head) {
        failed = head
        break
      }
      const framing = parser.beginBody()
      if ("_tag" in framing && framing._tag === "ParseError") {
        failed = framing
        break
      }
      inBody = true
      feedBody(parser.leftover())
    }
    from = to
    if (failed !== null) break
  }
  const completeBeforeEnd = parser.done
  const reusable = parser.reusable
  const ended = failed ?? parser.ended()
  return {
    status: parser.head?.status ?? null,
    headers: parser.head?.headers ?? null,
    body: out.subarray(0, outLen),
    error: ended,
    completeBeforeEnd,
    reusable,
    surplus: parser.surplus,
    headBytes
  }
}

// --- valid responses --------------------------------------------------------------------

type BodyFraming = "length" | "chunked" | "close"

interface Response {
  readonly interim: number
  readonly version: "1.0" | "1.1"
  readonly status: number
  readonly reason: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly framing: BodyFraming
  readonly connectionClose: boolean
  readonly body: Uint8Array
  /** Chunk sizes (cycled), and whether chunks carry extensions and the body trailers. */
  readonly chunks: ReadonlyArray<number>
  readonly extensions: boolean
  readonly trailers: boolean
}

const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/)
const reserved = new Set(["content-length", "transfer-encoding", "connection"])
const headerValue = fc.stringMatching(/^[!-~]([ !-~]{0,30}[!-~])?$/)

const response: fc.Arbitrary<Response> = fc.record({
  interim: fc.integer({ min: 0, max: 2 }),
  version: fc.constantFrom("1.0" as const, "1.1" as const),
  status: fc.constantFrom(200, 206, 403, 404, 416, 500, 503),
  reason: fc.stringMatching(/^[ -~]{0,20}$/),
  headers: fc.array(
    fc.tuple(
      token.filter((t) => !reserved.has(t.toLowerCase())),
      headerValue
    ),
    { maxLength: 8 }
  ),
  framing: fc.constantFrom<BodyFraming>("length", "chunked", "close"),
  connectionClose: fc.boolean(),
  body: fc.uint8Array({ maxLength: 2000 }),
  chunks: fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 6 }),
  extensions: fc.boolean(),
  trailers: fc.boolean()
})

const wireOf = (r: Response): Buffer => {
  const lines: Array<string> = []
  for (let i = 0; i < r.interim; i++) lines.push("HTTP/1.1 103 Early Hints\r\nlink: </style.css>\r\n\r\n")
  lines.push(`HTTP/${r.version} ${r.status} ${r.reason}\r\n`)
  for (const [k, v] of r.headers) lines.push(`${k}: ${v}\r\n`)
  if (r.connectionClose) lines.push("Connection: close\r\n")
  if (r.framing === "length") lines.push(`Content-Length: ${r.body.length}\r\n`)
  if (r.framing === "chunked") lines.push("Transfer-Encoding: chunked\r\n")
  lines.push("\r\n")
  const parts: Array<Uint8Array> = [Buffer.from(lines.join(""), "latin1")]
  if (r.framing === "chunked") parts.push(chunked(Buffer.from(r.body), r.chunks, r.extensions, r.trailers))
  else parts.push(Buffer.from(r.body))
  return Buffer.concat(parts)
}

const chunked = (data: Buffer, sizes: ReadonlyArray<number>, extensions: boolean, trailers: boolean): Buffer => {
  const parts: Array<Buffer> = []
  for (let at = 0, i = 0; at < data.length; i++) {
    const piece = data.subarray(at, at + (sizes[i % sizes.length] ?? 1))
    at += piece.length
    const size = i % 2 === 0 ? piece.length.toString(16).toUpperCase() : piece.length.toString(16)
    parts.push(Buffer.from(`${size}${extensions ? ';name="v"' : ""}\r\n`), piece, Buffer.from("\r\n"))
  }
  parts.push(Buffer.from(trailers ? "0\r\nx-checksum: abc\r\nx-other: 1\r\n\r\n" : "0\r\n\r\n"))
  return Buffer.concat(parts)
}

/** The headers a response should parse to: names lower-cased, repeats as lists. */
const expectedHeaders = (r: Response): Record<string, string | Array<string>> => {
  const all: Array<readonly [string, string]> = [...r.headers]
  if (r.connectionClose) all.push(["connection", "close"])
  if (r.framing === "length") all.push(["content-length", String(r.body.length)])
  if (r.framing === "chunked") all.push(["transfer-encoding", "chunked"])
  const out: Record<string, string | Array<string>> = {}
  for (const [k, v] of all) {
    const key = k.toLowerCase()
    const prev = out[key]
    out[key] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
  }
  return out
}

const cuts = fc.array(fc.nat({ max: 1_000_000 }), { maxLength: 40 })

describe("ResponseParser: valid responses", () => {
  it("any split of a response gives the same head and body bytes", () => {
    fc.assert(
      fc.property(response, cuts, (r, at) => {
        const wire = wireOf(r)
        const got = parse(wire, at)
        assert.isNull(got.error, got.error?.message)
        assert.strictEqual(got.status, r.status)
        assert.deepStrictEqual(got.headers, expectedHeaders(r))
        assert.isTrue(got.body.equals(Buffer.from(r.body)), "body bytes differ")
        assert.strictEqual(got.surplus, 0)
        // Framed bodies end without the connection's close; only those can leave it reusable.
        assert.strictEqual(got.completeBeforeEnd, r.framing !== "close")
        assert.strictEqual(got.reusable, r.framing !== "close" && r.version === "1.1" && !r.connectionClose)
      }),
      { numRuns: 300 }
    )
  })

  it("splits at every byte boundary, and one byte at a time, agree", () => {
    const r: Response = {
      interim: 1,
      version: "1.1",
      status: 206,
      reason: "Partial Content",
      headers: [
        ["ETag", '"v1"'],
        ["Content-Range", "bytes 0-99/1000"],
        ["Via", "a"],
        ["via", "b"]
      ],
      framing: "chunked",
      connectionClose: false,
      body: Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 7) & 0xff)),
      chunks: [1, 30, 13],
      extensions: true,
      trailers: true
    }
    const wire = wireOf(r)
    const whole = parse(wire)
    assert.isNull(whole.error)
    assert.isTrue(whole.reusable)
    assert.deepStrictEqual(whole.headers?.via, ["a", "b"])
    for (let k = 0; k <= wire.length; k++) {
      const got = parse(wire, [k])
      assert.isNull(got.error, `cut at ${k}`)
      assert.isTrue(got.body.equals(whole.body), `cut at ${k}`)
      assert.deepStrictEqual(got.headers, whole.headers, `cut at ${k}`)
    }
    const bytewise = parse(
      wire,
      Array.from({ length: wire.length }, (_, i) => i)
    )
    assert.isTrue(bytewise.body.equals(whole.body))
    assert.isTrue(bytewise.reusable)
  })

  it("a Content-Length body takes no byte past its length; bytes after any body are surplus", () => {
    const wire = Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1")
    const got = parse(wire)
    assert.strictEqual(got.body.toString(), "hello")
    assert.strictEqual(got.surplus, 8)
    assert.isFalse(got.reusable)
    const afterChunks = parse(Buffer.from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\nX"))
    assert.strictEqual(afterChunks.body.toString(), "ab")
    assert.strictEqual(afterChunks.surplus, 1)
    assert.isFalse(afterChunks.reusable)
  })

  it("reads a 204 and a 304 as bodiless, a folded header as one value, a 101 as final", () => {
    assert.isTrue(parse(Buffer.from("HTTP/1.1 204 No Content\r\n\r\n")).completeBeforeEnd)
    assert.isTrue(parse(Buffer.from("HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n")).reusable)
    const folded = parse(Buffer.from("HTTP/1.1 200 OK\r\nX-A: one\r\n  two\r\nContent-Length: 0\r\n\r\n"))
    assert.strictEqual(folded.headers?.["x-a"], "one two")
    assert.strictEqual(parse(Buffer.from("HTTP/1.1 101 Switching\r\n\r\n")).status, 101)
  })
})

// --- malformed responses ------------------------------------------------------------------

/** The failure for `wire`, in any split: the same reason, never a throw or an open end. */
const failsWith = (wire: Buffer, reason: ParseErrorReason, at: ReadonlyArray<number>): void => {
  const got = parse(wire, at)
  assert.strictEqual(got.error?.reason, reason, `${JSON.stringify(wire.toString("latin1").slice(0, 120))}`)
}

const okHead = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"

describe("ResponseParser: malformed responses give a typed error", () => {
  it("a bad status line", () => {
    const bad = fc.oneof(
      fc.stringMatching(/^[ -~]{0,40}$/).filter((s) => !/^HTTP\/1\.[01] \d{3}(?: |$)/.test(s)),
      fc.constantFrom("HTTP/2 200 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 20 OK", "http/1.1 200 OK", "HTTP/1.1  200 OK")
    )
    fc.assert(
      fc.property(bad, cuts, (line, at) =>
        failsWith(Buffer.from(`${line}\r\nContent-Length: 0\r\n\r\n`, "latin1"), "status-line", at)
      )
    )
  })

  it("a bad header line or a NUL in the head", () => {
    const bad = fc.oneof(
      fc.stringMatching(/^[!-9;-~]{1,20}$/).filter((s) => !s.startsWith(" ")),
      token.map((t) => `${t} : x`),
      token.map((t) => `${t}\t: x`),
      fc.constant(": no name"),
      fc.constant("na(me): x"),
      fc.constant("X-A: a\u0000b")
    )
    fc.assert(
      fc.property(bad, cuts, (line, at) =>
        failsWith(Buffer.from(`HTTP/1.1 200 OK\r\n${line}\r\nContent-Length: 0\r\n\r\n`, "latin1"), "header", at)
      )
    )
  })

  it("a CR or an LF alone in the head", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.constantFrom("\n", "\r", "\rX"),
        cuts,
        (which, replacement, at) => {
          const crlfs = [...okHead.matchAll(/\r\n/g)].map((m) => m.index)
          const i = crlfs[which] ?? 0
          const wire = Buffer.from(okHead.slice(0, i) + replacement + okHead.slice(i + 2), "latin1")
          failsWith(wire, "line-ending", at)
        }
      )
    )
  })

  it("an oversized head, after at most HEAD_MAX bytes of it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 * HEAD_MAX }), cuts, (extra, at) => {
        const filler = `X-Fill: ${"a".repeat(HEAD_MAX + extra)}\r\n`
        const wire = Buffer.from(`HTTP/1.1 200 OK\r\n${filler}Content-Length: 0\r\n\r\n`)
        const got = parse(wire, at)
        assert.strictEqual(got.error?.reason, "head-too-large")
        assert.isAtMost(got.headBytes, HEAD_MAX)
      }),
      { numRuns: 30 }
    )
  })

  it("a bad chunk size, data longer than its chunk, a missing CRLF after the data", () => {
    const bad = fc.constantFrom(
      "zz\r\nab\r\n0\r\n\r\n",
      "-1\r\n",
      "\r\n",
      "1234567890123\r\n",
      " 2\r\nab\r\n0\r\n\r\n",
      "2\nab\r\n0\r\n\r\n",
      "2\r\nabc\r\n0\r\n\r\n",
      "2\r\nab0\r\n\r\n",
      "2;ext\nab\r\n0\r\n\r\n",
      "0\r\nx-t: 1\nmore\r\n\r\n"
    )
    fc.assert(
      fc.property(bad, cuts, (body, at) =>
        failsWith(Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body}`), "chunk", at)
      )
    )
  })

  it("chunk extensions and trailers are bounded", () => {
    const longExt = `2;${"e".repeat(HEAD_MAX + 1)}\r\nab\r\n0\r\n\r\n`
    const longTrailers = `0\r\n${"x-t: 1\r\n".repeat(HEAD_MAX / 4)}\r\n`
    for (const body of [longExt, longTrailers]) {
      failsWith(Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body}`), "chunk-too-large", [])
    }
  })

  it("Content-Length and Transfer-Encoding both, lengths that disagree or are not numbers, other codings", () => {
    const heads = fc.constantFrom(
      "Content-Length: 3\r\nTransfer-Encoding: chunked",
      "Transfer-Encoding: chunked\r\nContent-Length: 3",
      "Content-Length: 3\r\nContent-Length: 4",
      "Content-Length: 3, 4",
      "Content-Length: abc",
      "Content-Length: -3",
      "Content-Length: 1e3",
      "Transfer-Encoding: gzip, chunked",
      "Transfer-Encoding: gzip",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
    )
    fc.assert(
      fc.property(heads, cuts, (h, at) =>
        failsWith(Buffer.from(`HTTP/1.1 200 OK\r\n${h}\r\n\r\n3\r\nabc\r\n0\r\n\r\n`), "framing", at)
      )
    )
  })

  it("a body that ends short of its Content-Length or before its last chunk is truncated", () => {
    fc.assert(
      fc.property(response, fc.nat(), cuts, (r, cut, at) => {
        fc.pre(r.framing !== "close")
        const wire = wireOf(r)
        const headEnd = wire.indexOf("\r\n\r\n", wire.lastIndexOf("HTTP/1.")) + 4
        fc.pre(wire.length > headEnd)
        const short = wire.subarray(0, headEnd + (cut % (wire.length - headEnd)))
        failsWith(short, "truncated", at)
      })
    )
  })

  it("any bytes at all, a mutated response too: a complete response or a typed error, never a throw", () => {
    const mutated = fc
      .tuple(response, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean()), { maxLength: 6 }))
      .map(([r, edits]) => {
        const bytes = [...wireOf(r)]
        for (const [i, b, insert] of edits) {
          if (insert) bytes.splice(i % (bytes.length + 1), 0, b)
          else if (bytes.length > 0) bytes[i % bytes.length] = b
        }
        return Uint8Array.from(bytes)
      })
    fc.assert(
      fc.property(fc.oneof(mutated, fc.uint8Array({ maxLength: 3000 })), cuts, (wire, at) => {
        const got = parse(wire, at)
        // Ended: either an error, or a head was read and the body is complete.
        if (got.error === null) assert.isNotNull(got.status)
        // The same verdict for the bytes in one read; the same body when they are a response.
        const whole = parse(wire)
        assert.strictEqual(whole.error?.reason, got.error?.reason)
        if (got.error === null) assert.isTrue(whole.body.equals(got.body))
      }),
      { numRuns: 500 }
    )
  })
})
