/**
 * Streaming ZIP writer: UTF-8 names, ZIP64 records where a size or offset needs them (or
 * always, with `forceZip64`, to test them small). Members are stored by default; with
 * `method: "deflate"` each member up to DEFLATE_MAX_BYTES is deflated (larger ones stay
 * stored, as real writers mix methods).
 *
 * By default each member's CRC-32 and sizes follow its data in a data descriptor (bit 3),
 * as a service streaming an archive writes them: the first byte goes out at once. A stored
 * archive's length is known up front (`length`, for Content-Length); a deflated one's is
 * not (undefined: chunked). For testing readers, `descriptor: false` puts them in the local
 * header instead (the member is read whole first) and `descriptorSignature: false` writes
 * descriptors without their optional signature.
 */
import { crc32, deflateRawSync } from "node:zlib"

export interface ZipEntry {
  /** Path inside the archive, "/"-separated; folders end with "/". */
  readonly name: string
  readonly size: number
  /** Milliseconds since the epoch. */
  readonly modifiedMs: number
  /** Produces the entry's bytes in order, `size` in total (not called for folders). */
  readonly read?: (offset: number, buffer: Buffer) => Promise<void>
}

export type ZipMethod = "stored" | "deflate"

export interface ZipOptions {
  readonly forceZip64?: boolean
  readonly method?: ZipMethod
  /** Sizes and CRC in a data descriptor after the data (default true) or in the local header. */
  readonly descriptor?: boolean
  /** Data descriptors start with their optional signature (default true). */
  readonly descriptorSignature?: boolean
}

export interface ZipPlan {
  /** The archive's length, when known before it is written (no deflated member). */
  readonly length: number | undefined
  /** Writes the archive; `write` resolves false when the receiver is gone. */
  readonly stream: (write: (chunk: Buffer) => Promise<boolean>) => Promise<boolean>
}

/** Larger members are stored even in a deflated archive (a member is deflated in memory). */
export const DEFLATE_MAX_BYTES = 16 * 1024 * 1024

export const planZip = (entries: ReadonlyArray<ZipEntry>, options: ZipOptions = {}): ZipPlan => {
  const forceZip64 = options.forceZip64 === true
  const layout: Layout = {
    descriptor: options.descriptor !== false,
    signature: options.descriptorSignature !== false
  }
  const laid: Array<LaidEntry> = entries.map((entry) => {
    const isFolder = entry.name.endsWith("/")
    return {
      entry,
      name: Buffer.from(entry.name, "utf8"),
      isFolder,
      deflated: options.method === "deflate" && !isFolder && entry.size <= DEFLATE_MAX_BYTES,
      zip64: forceZip64 || entry.size >= MAX32,
      offset: 0,
      crc: 0,
      compressed: isFolder ? 0 : entry.size
    }
  })
  return {
    length: laid.some((e) => e.deflated) ? undefined : storedLength(laid, layout, forceZip64),
    stream: async (write) => {
      let offset = 0
      for (const e of laid) {
        e.offset = offset
        e.zip64 ||= offset >= MAX32
        let whole: Buffer | undefined
        if (e.deflated || (!layout.descriptor && !e.isFolder)) {
          const bytes = Buffer.alloc(e.entry.size)
          if (e.entry.read && bytes.length > 0) await e.entry.read(0, bytes)
          e.crc = crc32(bytes)
          whole = e.deflated ? deflateRawSync(bytes) : bytes
          e.compressed = whole.length
        }
        const header = localHeader(e, layout)
        if (!(await write(header))) return false
        offset += header.length
        if (e.isFolder) continue
        if (whole !== undefined) {
          if (!(await write(whole))) return false
        } else if (!(await streamStored(e, write))) return false
        offset += e.compressed
        if (layout.descriptor) {
          const descriptor = dataDescriptor(e, layout.signature)
          if (!(await write(descriptor))) return false
          offset += descriptor.length
        }
      }
      const central = Buffer.concat(laid.map((e) => centralHeader(e, layout)))
      const zip64 = forceZip64 || laid.some((e) => e.zip64) || needsZip64End(laid.length, offset, central.length)
      const tail: Array<Buffer> = [central]
      if (zip64) tail.push(...zip64End(laid.length, central.length, offset))
      tail.push(endOfCentralDirectory(laid.length, central.length, offset, zip64))
      return write(Buffer.concat(tail))
    }
  }
}

interface Layout {
  readonly descriptor: boolean
  readonly signature: boolean
}

interface LaidEntry {
  readonly entry: ZipEntry
  readonly name: Buffer
  readonly isFolder: boolean
  readonly deflated: boolean
  zip64: boolean
  offset: number
  crc: number
  compressed: number
}

const MAX32 = 0xffffffff
const CHUNK = 1024 * 1024
const UTF8 = 1 << 11
const DESCRIPTOR = 1 << 3

const flags = (e: LaidEntry, layout: Layout) => UTF8 | (e.isFolder || !layout.descriptor ? 0 : DESCRIPTOR)
const versionNeeded = (e: LaidEntry) => (e.zip64 ? 45 : e.isFolder || e.deflated ? 20 : 10)
const methodOf = (e: LaidEntry) => (e.deflated ? 8 : 0)
const centralExtraLength = (zip64: boolean) => (zip64 ? 4 + 24 : 0)
const needsZip64End = (count: number, centralOffset: number, centralLength: number) =>
  count >= 0xffff || centralOffset >= MAX32 || centralLength >= MAX32

/** The whole archive's length when every member is stored (its data as long as its size). */
const storedLength = (laid: ReadonlyArray<LaidEntry>, layout: Layout, forceZip64: boolean): number => {
  let offset = 0
  let centralLength = 0
  let anyZip64 = false
  for (const e of laid) {
    const zip64 = e.zip64 || offset >= MAX32
    anyZip64 ||= zip64
    const descriptor = e.isFolder || !layout.descriptor ? 0 : (layout.signature ? 4 : 0) + (zip64 ? 20 : 12)
    offset += 30 + e.name.length + (zip64 ? 20 : 0) + e.compressed + descriptor
    centralLength += 46 + e.name.length + centralExtraLength(zip64)
  }
  const zip64End = forceZip64 || anyZip64 || needsZip64End(laid.length, offset, centralLength)
  return offset + centralLength + (zip64End ? 56 + 20 : 0) + 22
}

/** Writes a stored member's bytes as they are read, computing its CRC on the way. */
const streamStored = async (e: LaidEntry, write: (chunk: Buffer) => Promise<boolean>): Promise<boolean> => {
  let crc = 0
  for (let done = 0; done < e.entry.size; ) {
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK, e.entry.size - done))
    if (e.entry.read) await e.entry.read(done, buffer)
    else buffer.fill(0)
    crc = crc32(buffer, crc)
    done += buffer.length
    if (!(await write(buffer))) return false
  }
  e.crc = crc
  return true
}

const localHeader = (e: LaidEntry, layout: Layout): Buffer => {
  const extra = e.zip64 ? 20 : 0
  // With a descriptor, the header's CRC and sizes are zero (APPNOTE 4.4.4, bit 3).
  const known = e.isFolder || !layout.descriptor
  const b = Buffer.alloc(30 + e.name.length + extra)
  b.writeUInt32LE(0x04034b50, 0)
  b.writeUInt16LE(versionNeeded(e), 4)
  b.writeUInt16LE(flags(e, layout), 6)
  b.writeUInt16LE(methodOf(e), 8)
  const { time, date } = dosDateTime(e.entry.modifiedMs)
  b.writeUInt16LE(time, 10)
  b.writeUInt16LE(date, 12)
  b.writeUInt32LE(known ? e.crc >>> 0 : 0, 14)
  b.writeUInt32LE(e.zip64 ? MAX32 : known ? e.compressed : 0, 18)
  b.writeUInt32LE(e.zip64 ? MAX32 : known ? e.entry.size : 0, 22)
  b.writeUInt16LE(e.name.length, 26)
  b.writeUInt16LE(extra, 28)
  e.name.copy(b, 30)
  if (e.zip64) {
    const at = 30 + e.name.length
    b.writeUInt16LE(0x0001, at)
    b.writeUInt16LE(16, at + 2)
    b.writeBigUInt64LE(known ? BigInt(e.isFolder ? 0 : e.entry.size) : 0n, at + 4)
    b.writeBigUInt64LE(known ? BigInt(e.compressed) : 0n, at + 12)
  }
  return b
}

const dataDescriptor = (e: LaidEntry, signature: boolean): Buffer => {
  const b = Buffer.alloc(e.zip64 ? 24 : 16)
  b.writeUInt32LE(0x08074b50, 0)
  b.writeUInt32LE(e.crc >>> 0, 4)
  if (e.zip64) {
    b.writeBigUInt64LE(BigInt(e.compressed), 8)
    b.writeBigUInt64LE(BigInt(e.entry.size), 16)
  } else {
    b.writeUInt32LE(e.compressed, 8)
    b.writeUInt32LE(e.entry.size, 12)
  }
  return signature ? b : b.subarray(4)
}

const centralHeader = (e: LaidEntry, layout: Layout): Buffer => {
  const extra = centralExtraLength(e.zip64)
  const size = e.isFolder ? 0 : e.entry.size
  const b = Buffer.alloc(46 + e.name.length + extra)
  b.writeUInt32LE(0x02014b50, 0)
  b.writeUInt16LE((3 << 8) | 45, 4) // made by: Unix, 4.5
  b.writeUInt16LE(versionNeeded(e), 6)
  b.writeUInt16LE(flags(e, layout), 8)
  b.writeUInt16LE(methodOf(e), 10)
  const { time, date } = dosDateTime(e.entry.modifiedMs)
  b.writeUInt16LE(time, 12)
  b.writeUInt16LE(date, 14)
  b.writeUInt32LE(e.crc >>> 0, 16)
  b.writeUInt32LE(e.zip64 ? MAX32 : e.compressed, 20)
  b.writeUInt32LE(e.zip64 ? MAX32 : size, 24)
  b.writeUInt16LE(e.name.length, 28)
  b.writeUInt16LE(extra, 30)
  b.writeUInt16LE(0, 32) // comment
  b.writeUInt16LE(0, 34) // disk
  b.writeUInt16LE(0, 36) // internal attributes
  b.writeUInt32LE(e.isFolder ? ((0o40755 << 16) | 0x10) >>> 0 : (0o100644 << 16) >>> 0, 38)
  b.writeUInt32LE(e.zip64 ? MAX32 : e.offset, 42)
  e.name.copy(b, 46)
  if (e.zip64) {
    const at = 46 + e.name.length
    b.writeUInt16LE(0x0001, at)
    b.writeUInt16LE(24, at + 2)
    b.writeBigUInt64LE(BigInt(size), at + 4)
    b.writeBigUInt64LE(BigInt(e.compressed), at + 12)
    b.writeBigUInt64LE(BigInt(e.offset), at + 20)
  }
  return b
}

const zip64End = (count: number, centralLength: number, centralOffset: number): Array<Buffer> => {
  const record = Buffer.alloc(56)
  record.writeUInt32LE(0x06064b50, 0)
  record.writeBigUInt64LE(44n, 4)
  record.writeUInt16LE((3 << 8) | 45, 12)
  record.writeUInt16LE(45, 14)
  record.writeUInt32LE(0, 16)
  record.writeUInt32LE(0, 20)
  record.writeBigUInt64LE(BigInt(count), 24)
  record.writeBigUInt64LE(BigInt(count), 32)
  record.writeBigUInt64LE(BigInt(centralLength), 40)
  record.writeBigUInt64LE(BigInt(centralOffset), 48)
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0)
  locator.writeUInt32LE(0, 4)
  locator.writeBigUInt64LE(BigInt(centralOffset + centralLength), 8)
  locator.writeUInt32LE(1, 16)
  return [record, locator]
}

const endOfCentralDirectory = (count: number, centralLength: number, centralOffset: number, zip64: boolean): Buffer => {
  const b = Buffer.alloc(22)
  b.writeUInt32LE(0x06054b50, 0)
  b.writeUInt16LE(zip64 ? 0xffff : count, 8)
  b.writeUInt16LE(zip64 ? 0xffff : count, 10)
  b.writeUInt32LE(zip64 ? MAX32 : centralLength, 12)
  b.writeUInt32LE(zip64 ? MAX32 : centralOffset, 16)
  return b
}

const dosDateTime = (ms: number): { readonly time: number; readonly date: number } => {
  const d = new Date(Math.max(ms, Date.UTC(1980, 0, 1)))
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate()
  }
}
