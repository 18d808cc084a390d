/**
 * One archive member written to its partial file as its bytes stream: stored bytes as they
 * come, deflated ones through zlib's raw inflate (backpressure both ways: the inflater
 * holds at most its buffers, whatever the ratio). What it writes is counted and CRC-32'd;
 * `finish` says whether it is exactly the file expected: the planned size, the CRC and sizes
 * the archive declares, and for deflate a compressed stream that ends exactly where the
 * member's data does. Writes are gathered into WRITE_BYTES before each positional write.
 * Bytes beyond the expected size are never written (the member is then refused).
 *
 * The descriptor stays open after `finish` (closed by the landing batch after its fsync, or
 * by `close`); the partial file is removed by `discard`.
 */
import { crc32, createInflateRaw, type InflateRaw } from "node:zlib"
import { Effect, Fiber } from "effect"
import type { TransferFsShape } from "../TransferFs.ts"

/** Bytes gathered before one positional write. */
export const WRITE_BYTES = 256 * 1024

export type MemberVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string }

export class MemberFile {
  readonly path: string
  readonly fd: number
  readonly #fs: TransferFsShape
  readonly #expected: number
  #gathered: Array<Buffer> = []
  #gatheredBytes = 0
  #position = 0
  #size = 0
  #crc = 0
  #compressedIn = 0
  #oversized = false
  readonly #inflate: Inflation | undefined

  private constructor(fs: TransferFsShape, path: string, fd: number, expected: number, inflate: Inflation | undefined) {
    this.#fs = fs
    this.path = path
    this.fd = fd
    this.#expected = expected
    this.#inflate = inflate
  }

  /** Opens (emptied) `path` for a member of `method` (0 stored, 8 deflate) that should be `expected` bytes. */
  static open = (fs: TransferFsShape, path: string, expected: number, method: 0 | 8) =>
    Effect.gen(function* () {
      const fd = yield* Effect.tryPromise(() => fs.openPartial(path, true))
      if (method === 0) return new MemberFile(fs, path, fd, expected, undefined)
      const inflater = createInflateRaw()
      const member: MemberFile = new MemberFile(fs, path, fd, expected, { inflater, reader: undefined })
      const reader = yield* Effect.forkChild(member.#drainInflater(inflater))
      if (member.#inflate !== undefined) member.#inflate.reader = reader
      return member
    })

  /** Bytes of the member's data as the archive has them (compressed for deflate). */
  write(bytes: Buffer): Effect.Effect<void, unknown> {
    this.#compressedIn += bytes.length
    const inflate = this.#inflate
    if (inflate === undefined) return this.#accept(bytes)
    return Effect.callback<void>((resume) => {
      const { inflater } = inflate
      if (inflater.write(bytes)) return resume(Effect.void)
      const go = () => {
        inflater.off("drain", go)
        inflater.off("close", go)
        resume(Effect.void)
      }
      inflater.on("drain", go)
      inflater.on("close", go)
    })
  }

  /** Ends the member: writes what is gathered and checks it against the archive's declaration. */
  finish(declared: { readonly crc: number; readonly compressedSize: number; readonly size: number }) {
    return Effect.gen({ self: this }, function* () {
      const inflate = this.#inflate
      if (inflate !== undefined) {
        inflate.inflater.end()
        const drained = inflate.reader === undefined ? undefined : yield* Effect.result(Fiber.join(inflate.reader))
        if (drained?._tag === "Failure") return refused(`its deflated data is damaged (${describe(drained.failure)})`)
        if (inflate.inflater.bytesWritten !== this.#compressedIn) {
          return refused("its deflated data ends before the member does")
        }
      }
      yield* this.#flush()
      if (this.#oversized) return refused(`it is larger than the ${this.#expected} bytes expected`)
      if (this.#size !== this.#expected) return refused(`it has ${this.#size} bytes, ${this.#expected} expected`)
      if (declared.size !== this.#size || declared.compressedSize !== this.#compressedIn) {
        return refused(`the archive declares ${declared.size} bytes (${declared.compressedSize} stored) for it`)
      }
      if (declared.crc >>> 0 !== this.#crc >>> 0) return refused("its CRC-32 does not match its bytes")
      return { ok: true } satisfies MemberVerdict
    })
  }

  /** Closes the descriptor and removes the partial file (a refused or abandoned member). */
  discard(): Effect.Effect<void> {
    this.#inflate?.inflater.destroy()
    return Effect.promise(() =>
      this.#fs
        .close(this.fd)
        .catch(() => undefined)
        .then(() => this.#fs.unlink(this.path).catch(() => undefined))
    )
  }

  /** Counts, CRCs and gathers uncompressed bytes; writes once WRITE_BYTES are gathered. */
  #accept(bytes: Buffer): Effect.Effect<void, unknown> {
    if (this.#oversized || bytes.length === 0) return Effect.void
    const room = this.#expected - this.#size
    const kept = bytes.length > room ? bytes.subarray(0, room) : bytes
    if (bytes.length > room) this.#oversized = true
    this.#size += kept.length
    this.#crc = crc32(kept, this.#crc)
    this.#gathered.push(kept)
    this.#gatheredBytes += kept.length
    return this.#gatheredBytes >= WRITE_BYTES ? this.#flush() : Effect.void
  }

  #flush(): Effect.Effect<void, unknown> {
    return Effect.suspend(() => {
      if (this.#gatheredBytes === 0) return Effect.void
      const buffers = this.#gathered
      const position = this.#position
      this.#gathered = []
      this.#position += this.#gatheredBytes
      this.#gatheredBytes = 0
      return writeAll(this.#fs, this.fd, buffers, position)
    })
  }

  /** Moves the inflater's output into the file until it ends (or fails). */
  #drainInflater(inflater: InflateRaw): Effect.Effect<void, unknown> {
    return Effect.gen({ self: this }, function* () {
      const chunks = inflater[Symbol.asyncIterator]()
      while (true) {
        const next = yield* Effect.tryPromise(() => chunks.next())
        if (next.done === true) return
        if (Buffer.isBuffer(next.value)) yield* this.#accept(next.value)
      }
    })
  }
}

interface Inflation {
  readonly inflater: InflateRaw
  reader: Fiber.Fiber<void, unknown> | undefined
}

const refused = (reason: string): MemberVerdict => ({ ok: false, reason })

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Writes every byte of `buffers` at `position`, continuing after short writes. */
const writeAll = (fs: TransferFsShape, fd: number, buffers: ReadonlyArray<Buffer>, position: number) =>
  Effect.callback<void, unknown>((resume) => {
    let rest = buffers
    let at = position
    const step = () =>
      fs.writev(fd, rest, at, (error, written) => {
        if (error !== null) return resume(Effect.fail(error))
        at += written
        rest = skip(rest, written)
        if (rest.length === 0) resume(Effect.void)
        else step()
      })
    step()
  })

const skip = (buffers: ReadonlyArray<Buffer>, bytes: number): ReadonlyArray<Buffer> => {
  const rest: Array<Buffer> = []
  let left = bytes
  for (const b of buffers) {
    if (left >= b.length) left -= b.length
    else {
      rest.push(left > 0 ? b.subarray(left) : b)
      left = 0
    }
  }
  return rest
}
