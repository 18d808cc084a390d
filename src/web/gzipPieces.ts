/**
 * One gzip answer made of pieces deflated apart: the fixed pieces of a page once, at start,
 * only the piece that changes with each answer per answer. Every piece but the last ends on a
 * sync flush (byte-aligned, no final block), and no piece's back-references reach before its
 * own start, so the pieces' deflated bytes laid end to end are one deflate stream (RFC 1951)
 * of their plain bytes laid end to end; the gzip frame around them (RFC 1952: GZIP_HEADER,
 * the pieces' deflated bytes, gzipTrailer) carries the CRC-32 and the length of the whole.
 */
import * as Zlib from "node:zlib"
import { Effect } from "effect"

export interface DeflatedPiece {
  readonly plain: Uint8Array
  readonly deflated: Uint8Array
}

/** `plain` deflated on its own (zlib's thread pool, off the event loop); `last` ends the stream. */
export const deflatePiece = (plain: Uint8Array, last: boolean): Effect.Effect<DeflatedPiece> =>
  Effect.callback<DeflatedPiece>((resume) => {
    Zlib.deflateRaw(
      plain,
      {
        level: Zlib.constants.Z_BEST_COMPRESSION,
        finishFlush: last ? Zlib.constants.Z_FINISH : Zlib.constants.Z_SYNC_FLUSH
      },
      (error, deflated) => resume(error === null ? Effect.succeed({ plain, deflated }) : Effect.die(error))
    )
  })

/** What opens a gzip member: its pieces' deflated bytes follow, then gzipTrailer. */
export const GZIP_HEADER: Uint8Array = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]) // magic, deflate, no flags, no time, OS unknown

/** What closes the gzip member of `pieces`: the CRC-32 and the length (mod 2^32) of their plain bytes. */
export const gzipTrailer = (pieces: ReadonlyArray<DeflatedPiece>): Uint8Array => {
  let crc = 0
  let size = 0
  for (const piece of pieces) {
    crc = Zlib.crc32(piece.plain, crc)
    size += piece.plain.byteLength
  }
  const trailer = Buffer.alloc(8)
  trailer.writeUInt32LE(crc >>> 0, 0)
  trailer.writeUInt32LE(size % 2 ** 32, 4)
  return trailer
}
