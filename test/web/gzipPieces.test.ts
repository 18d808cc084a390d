/**
 * Pieces deflated apart, laid end to end in one gzip frame (src/web/gzipPieces.ts): what a
 * gzip reader gets back is the pieces' plain bytes in order, whatever they hold, an empty
 * piece and a piece repeating the one before it (a back-reference it must not make) included.
 */
import * as Zlib from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { deflatePiece, GZIP_HEADER, gzipTrailer } from "../../src/web/gzipPieces.ts"

const text = (s: string) => Buffer.from(s)

describe("gzip of pieces", () => {
  it.effect("reads back as the pieces' bytes in order", () =>
    Effect.gen(function* () {
      const head = text("<!doctype html><title>x</title>".repeat(200))
      const random = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919 + (i >> 3)) % 251))
      const cases: ReadonlyArray<ReadonlyArray<Buffer>> = [
        [head, text('{"a":1}'), head],
        [head, text(""), text("</script></body>")],
        [random, head, random],
        [text("")]
      ]
      for (const plains of cases) {
        const pieces = []
        for (const [i, plain] of plains.entries()) pieces.push(yield* deflatePiece(plain, i === plains.length - 1))
        const zipped = Buffer.concat([GZIP_HEADER, ...pieces.map((piece) => piece.deflated), gzipTrailer(pieces)])
        assert.isTrue(Zlib.gunzipSync(zipped).equals(Buffer.concat(plains)))
      }
    })
  )
})
