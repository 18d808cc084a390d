/**
 * A ZIP archive read as it streams: fed bytes in order (`push`, then `finish`), it hands out
 * events one at a time (`next`), never holding more than one local header or a few bytes
 * beyond the data it has handed out. Pure: no I/O, no decompression, no CRC (the consumer
 * checks what it decompresses against `MemberEnd`).
 *
 *   local header ─► Member ─► Data … ─► MemberEnd ─► local header … ─► central directory: End
 *                      │                    ▲
 *                      └ sizes known: the data is that long (then a descriptor if bit 3)
 *                        sizes unknown (bit 3): the data ends at the first data descriptor
 *                        whose compressed size is the data's length and after which a ZIP
 *                        record starts (APPNOTE 4.3.9, with or without its signature,
 *                        32- or 64-bit sizes)
 *
 * Where the consumer expects the data to end (`expectCompressedSize`, the size a stored
 * member should have), the descriptor is looked for there first, with or without its
 * signature, and only signed ones beyond (a member longer than expected); never before it,
 * where the member's own bytes could imitate one. A member shorter than expected is lost
 * with everything after it (Broken). Anything else that cannot be followed (an
 * unknown record, a descriptor never found, input ending inside a member) is `Broken`, and
 * nothing is read after it. Names are UTF-8 (bit 11, and in practice without it; invalid
 * UTF-8 is read as Latin-1): they are data for matching only, never paths.
 */

export interface MemberHeader {
  readonly name: string
  /** 0 stored, 8 deflate; others are reported as they are. */
  readonly method: number
  readonly flags: number
  /** Bit 0 (traditional encryption) or bit 6 (strong encryption). */
  readonly encrypted: boolean
  /** Sizes and CRC come after the data (bit 3) rather than in the header. */
  readonly descriptor: boolean
  /** The header's (or ZIP64 extra's) sizes when they are known before the data. */
  readonly compressedSize: number | undefined
  readonly size: number | undefined
  /** Offset of the local header in the archive. */
  readonly offset: number
}

export type ZipEvent =
  | { readonly _tag: "Member"; readonly header: MemberHeader }
  | { readonly _tag: "Data"; readonly bytes: Buffer }
  | {
      /** The member's data is complete; the CRC and sizes it declares (header or descriptor). */
      readonly _tag: "MemberEnd"
      readonly crc: number
      readonly compressedSize: number
      readonly size: number
    }
  /** The central directory (or an end record) starts: no member follows. */
  | { readonly _tag: "End" }
  | { readonly _tag: "Broken"; readonly reason: string }

export class ZipStreamReader {
  #pending: Buffer = EMPTY
  /** Archive offset of `#pending[0]`. */
  #offset = 0
  #finished = false
  #state: State = { _tag: "Header" }
  readonly #events: Array<ZipEvent> = []

  /** Appends the next bytes of the archive. */
  push(chunk: Buffer): void {
    if (this.#state._tag === "Done") return
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk])
  }

  /** No more bytes will come. */
  finish(): void {
    this.#finished = true
  }

  /** True once End or Broken was handed out: nothing more will be. */
  get done(): boolean {
    return this.#state._tag === "Done" && this.#events.length === 0
  }

  /**
   * After a Member with unknown sizes: where its data should end (the compressed size the
   * consumer expects). Only there is a descriptor without a signature recognised.
   */
  expectCompressedSize(size: number): void {
    if (this.#state._tag === "Search") this.#state.hint = size
  }

  /** The next event, or undefined when more bytes are needed (or after End and Broken). */
  next(): ZipEvent | undefined {
    while (this.#events.length === 0 && this.#step()) {}
    return this.#events.shift()
  }

  /** Runs the state machine once; false when it needs more input or is done. */
  #step(): boolean {
    const state = this.#state
    switch (state._tag) {
      case "Done":
        return false
      case "Header":
        return this.#header()
      case "Known":
        return this.#known(state)
      case "Descriptor":
        return this.#descriptorAfterKnown(state)
      case "Search":
        return this.#search(state)
    }
  }

  #header(): boolean {
    if (this.#pending.length < 4) return this.#needMore("inside a record's signature")
    const signature = this.#pending.readUInt32LE(0)
    if (END_SIGNATURES.has(signature)) {
      this.#emit({ _tag: "End" })
      this.#state = { _tag: "Done" }
      this.#pending = EMPTY
      return true
    }
    if (signature !== LOCAL_HEADER) return this.#broken(`unexpected bytes at offset ${this.#offset}, not a ZIP record`)
    if (this.#pending.length < 30) return this.#needMore("inside a local header")
    const nameLength = this.#pending.readUInt16LE(26)
    const extraLength = this.#pending.readUInt16LE(28)
    const length = 30 + nameLength + extraLength
    if (this.#pending.length < length) return this.#needMore("inside a local header")
    const flags = this.#pending.readUInt16LE(6)
    const header = this.#pending.subarray(0, length)
    let compressedSize: number | undefined = header.readUInt32LE(18)
    let size: number | undefined = header.readUInt32LE(22)
    const zip64 = zip64Sizes(header.subarray(30 + nameLength))
    if (zip64 !== undefined && (compressedSize === MAX32 || size === MAX32)) {
      compressedSize = zip64.compressedSize
      size = zip64.size
    }
    const descriptor = (flags & DESCRIPTOR_FLAG) !== 0
    // Bit 3 zeroes the header's sizes: unknown until the descriptor (APPNOTE 4.4.4).
    const sizesKnown = !descriptor || compressedSize !== 0
    const member: MemberHeader = {
      name: decodeName(header.subarray(30, 30 + nameLength)),
      method: header.readUInt16LE(8),
      flags,
      encrypted: (flags & ENCRYPTED_FLAGS) !== 0,
      descriptor,
      compressedSize: sizesKnown ? compressedSize : undefined,
      size: sizesKnown ? size : undefined,
      offset: this.#offset
    }
    this.#consume(length)
    this.#emit({ _tag: "Member", header: member })
    const declared = { crc: header.readUInt32LE(14), compressedSize, size }
    this.#state = sizesKnown
      ? { _tag: "Known", remaining: compressedSize, declared, descriptor, zip64: zip64 !== undefined }
      : { _tag: "Search", length: 0, hint: undefined, zip64: zip64 !== undefined }
    return true
  }

  #known(state: Extract<State, { _tag: "Known" }>): boolean {
    if (state.remaining > 0) {
      if (this.#pending.length === 0) return this.#needMore("inside a member's data")
      const bytes = this.#take(Math.min(state.remaining, this.#pending.length))
      state.remaining -= bytes.length
      this.#emit({ _tag: "Data", bytes })
      return true
    }
    if (state.descriptor) {
      this.#state = { _tag: "Descriptor", declared: state.declared, zip64: state.zip64 }
      return true
    }
    this.#emit({ _tag: "MemberEnd", ...state.declared })
    this.#state = { _tag: "Header" }
    return true
  }

  /** Bit 3 with sizes in the header too: the descriptor follows the data, whichever its form. */
  #descriptorAfterKnown(state: Extract<State, { _tag: "Descriptor" }>): boolean {
    const found = descriptorAt(this.#pending, 0, state.declared.compressedSize, {
      unsigned: true,
      zip64: state.zip64,
      finished: this.#finished
    })
    if (found === "more") return this.#needMore("inside a data descriptor")
    if (found === undefined) return this.#broken(`no data descriptor after the member at offset ${this.#offset}`)
    this.#consume(found.length)
    this.#emit({ _tag: "MemberEnd", crc: found.crc, compressedSize: found.compressedSize, size: found.size })
    this.#state = { _tag: "Header" }
    return true
  }

  /**
   * Sizes unknown: hands out data up to the first place a matching descriptor may start.
   * With an expected size, nothing before it is taken for a descriptor: a member's own bytes
   * may look like one (an empty member's descriptor and a local header signature, say).
   */
  #search(state: Extract<State, { _tag: "Search" }>): boolean {
    const hinted = state.hint === undefined ? -1 : state.hint - state.length
    // Before the expected end nothing is a descriptor: handed out without a look (and
    // without holding bytes back, so that the next chunk is not copied).
    if (hinted > 0) {
      if (this.#pending.length === 0) return this.#needMore("inside a member's data")
      return this.#searchData(state, Math.min(hinted, this.#pending.length))
    }
    let from = Math.max(0, hinted)
    while (true) {
      const signed = this.#pending.indexOf(DESCRIPTOR_SIGNATURE_BYTES, from)
      const at = Math.min(signed < 0 ? Infinity : signed, hinted >= from ? hinted : Infinity)
      if (at === Infinity || at >= this.#pending.length) {
        // No candidate yet: everything but a signature's possible start is data.
        const safe = Math.max(0, this.#pending.length - 3)
        if (safe > 0) return this.#searchData(state, safe)
        return this.#needMore("inside a member's data (no data descriptor found)")
      }
      const found = descriptorAt(this.#pending, at, state.length + at, {
        unsigned: at === hinted,
        zip64: state.zip64,
        finished: this.#finished
      })
      if (found === "more") {
        if (at > 0) return this.#searchData(state, at)
        return this.#needMore("inside a member's data (no data descriptor found)")
      }
      if (found === undefined) {
        from = at + 1
        continue
      }
      if (at > 0) return this.#searchData(state, at)
      this.#consume(found.length)
      this.#emit({ _tag: "MemberEnd", crc: found.crc, compressedSize: found.compressedSize, size: found.size })
      this.#state = { _tag: "Header" }
      return true
    }
  }

  #searchData(state: Extract<State, { _tag: "Search" }>, length: number): boolean {
    const bytes = this.#take(length)
    state.length += bytes.length
    this.#emit({ _tag: "Data", bytes })
    return true
  }

  #needMore(where: string): boolean {
    if (this.#finished) return this.#broken(`the archive ends ${where}`)
    return false
  }

  #broken(reason: string): boolean {
    this.#emit({ _tag: "Broken", reason })
    this.#state = { _tag: "Done" }
    this.#pending = EMPTY
    return true
  }

  #emit(event: ZipEvent): void {
    this.#events.push(event)
  }

  #take(length: number): Buffer {
    const bytes = this.#pending.subarray(0, length)
    this.#consume(length)
    return bytes
  }

  #consume(length: number): void {
    this.#pending = this.#pending.subarray(length)
    this.#offset += length
  }
}

type Declared = { readonly crc: number; readonly compressedSize: number; readonly size: number }

type State =
  | { readonly _tag: "Header" }
  | {
      readonly _tag: "Known"
      remaining: number
      readonly declared: Declared
      readonly descriptor: boolean
      readonly zip64: boolean
    }
  | { readonly _tag: "Descriptor"; readonly declared: Declared; readonly zip64: boolean }
  | { readonly _tag: "Search"; length: number; hint: number | undefined; readonly zip64: boolean }
  | { readonly _tag: "Done" }

const EMPTY = Buffer.alloc(0)
const MAX32 = 0xffffffff
const LOCAL_HEADER = 0x04034b50
const DESCRIPTOR_SIGNATURE = 0x08074b50
const DESCRIPTOR_SIGNATURE_BYTES = Buffer.from([0x50, 0x4b, 0x07, 0x08])
/** Records that may follow the last member: central header, end records, archive extra data, digital signature. */
const END_SIGNATURES: ReadonlySet<number> = new Set([
  0x02014b50, 0x06054b50, 0x06064b50, 0x07064b50, 0x08064b50, 0x05054b50
])
/** What may start right after a data descriptor. */
const FOLLOWERS: ReadonlySet<number> = new Set([LOCAL_HEADER, ...END_SIGNATURES])
const DESCRIPTOR_FLAG = 1 << 3
const ENCRYPTED_FLAGS = (1 << 0) | (1 << 6)
const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The sizes of a ZIP64 extended information field (0x0001) in a local header's extra, if any. */
const zip64Sizes = (extra: Buffer): { readonly size: number; readonly compressedSize: number } | undefined => {
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(at)
    const length = extra.readUInt16LE(at + 2)
    if (at + 4 + length > extra.length) return undefined
    // The local header's field holds both sizes (APPNOTE 4.5.3).
    if (id === 0x0001 && length >= 16) {
      return {
        size: safeNumber(extra.readBigUInt64LE(at + 4)),
        compressedSize: safeNumber(extra.readBigUInt64LE(at + 12))
      }
    }
    at += 4 + length
  }
  return undefined
}

/** Beyond 2^53 a size cannot be a real member: it can only fail to match. */
const safeNumber = (value: bigint): number =>
  value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value)

/**
 * A data descriptor at `at` that declares `compressedSize` and is followed by a ZIP record:
 * its values and length; "more" when the bytes to decide have not all arrived; undefined
 * when there is none. Signed forms first, then (only with `unsigned`) those without the
 * signature; 64-bit sizes first after a ZIP64 local header (APPNOTE 4.3.9.2), else 32-bit.
 * A form is judged only once every form before it could be: a 64-bit descriptor read as a
 * 32-bit one could otherwise match on its first half.
 */
const descriptorAt = (
  buffer: Buffer,
  at: number,
  compressedSize: number,
  options: { readonly unsigned: boolean; readonly zip64: boolean; readonly finished: boolean }
):
  | { readonly crc: number; readonly compressedSize: number; readonly size: number; readonly length: number }
  | undefined
  | "more" => {
  const widths = options.zip64 ? [true, false] : [false, true]
  for (const signed of options.unsigned ? [true, false] : [true]) {
    for (const wide of widths) {
      const start = at + (signed ? 4 : 0)
      const length = (signed ? 4 : 0) + (wide ? 20 : 12)
      if (at + length + 4 > buffer.length) {
        if (!options.finished) return "more"
        continue
      }
      if (signed && buffer.readUInt32LE(at) !== DESCRIPTOR_SIGNATURE) continue
      const declared = wide ? safeNumber(buffer.readBigUInt64LE(start + 4)) : buffer.readUInt32LE(start + 4)
      const size = wide ? safeNumber(buffer.readBigUInt64LE(start + 12)) : buffer.readUInt32LE(start + 8)
      if (declared !== compressedSize || !FOLLOWERS.has(buffer.readUInt32LE(at + length))) continue
      return { crc: buffer.readUInt32LE(start), compressedSize: declared, size, length }
    }
  }
  return undefined
}

const decodeName = (bytes: Buffer): string => {
  try {
    return utf8.decode(bytes)
  } catch {
    return bytes.toString("latin1")
  }
}
