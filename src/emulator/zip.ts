/**
 * Streaming ZIP writer: stored entries (no compression), UTF-8 names, CRC-32 computed while
 * the bytes stream and written in a data descriptor (bit 3), so the first byte goes out at
 * once and the total length is known up front (Content-Length). ZIP64 records are used
 * where a size or offset needs them (or always, with `forceZip64`, to test them small).
 */
import { crc32 } from "node:zlib"

export interface ZipEntry {
  /** Path inside the archive, "/"-separated; folders end with "/". */
  readonly name: string
  readonly size: number
  /** Milliseconds since the epoch. */
  readonly modifiedMs: number
  /** Produces the entry's bytes in order, `size` in total (not called for folders). */
  readonly read?: (offset: number, buffer: Buffer) => Promise<void>
}

export interface ZipPlan {
  readonly length: number
  /** Writes the archive; `write` resolves false when the receiver is gone. */
  readonly stream: (write: (chunk: Buffer) => Promise<boolean>) => Promise<boolean>
}

export const planZip = (entries: ReadonlyArray<ZipEntry>, options: { readonly forceZip64?: boolean } = {}): ZipPlan => {
  const laid: Array<LaidEntry> = []
  let offset = 0
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8")
    const isFolder = entry.name.endsWith("/")
    const zip64 = options.forceZip64 === true || entry.size >= MAX32 || offset >= MAX32
    const localLength = 30 + name.length + (zip64 ? 20 : 0)
    const descriptorLength = isFolder ? 0 : zip64 ? 24 : 16
    laid.push({ entry, name, isFolder, zip64, offset, crc: 0 })
    offset += localLength + (isFolder ? 0 : entry.size) + descriptorLength
  }
  const centralOffset = offset
  const centralLength = laid.reduce((sum, e) => sum + 46 + e.name.length + centralExtraLength(e), 0)
  const needsZip64End =
    options.forceZip64 === true ||
    laid.length >= 0xffff ||
    centralOffset >= MAX32 ||
    centralLength >= MAX32 ||
    laid.some((e) => e.zip64)
  const length = centralOffset + centralLength + (needsZip64End ? 56 + 20 : 0) + 22
  return {
    length,
    stream: async (write) => {
      for (const e of laid) {
        if (!(await write(localHeader(e)))) return false
        if (e.isFolder) continue
        let crc = 0
        const read = e.entry.read
        for (let done = 0; done < e.entry.size; ) {
          const buffer = Buffer.allocUnsafe(Math.min(CHUNK, e.entry.size - done))
          if (read) await read(done, buffer)
          else buffer.fill(0)
          crc = crc32(buffer, crc)
          done += buffer.length
          if (!(await write(buffer))) return false
        }
        e.crc = crc
        if (!(await write(dataDescriptor(e)))) return false
      }
      const central = Buffer.concat(laid.map(centralHeader))
      const tail: Array<Buffer> = [central]
      if (needsZip64End) tail.push(...zip64End(laid.length, centralLength, centralOffset))
      tail.push(endOfCentralDirectory(laid.length, centralLength, centralOffset, needsZip64End))
      return write(Buffer.concat(tail))
    }
  }
}

interface LaidEntry {
  readonly entry: ZipEntry
  readonly name: Buffer
  readonly isFolder: boolean
  readonly zip64: boolean
  readonly offset: number
  crc: number
}

const MAX32 = 0xffffffff
const CHUNK = 1024 * 1024
const UTF8 = 1 << 11
const DESCRIPTOR = 1 << 3

const flags = (e: LaidEntry) => UTF8 | (e.isFolder ? 0 : DESCRIPTOR)
const versionNeeded = (e: LaidEntry) => (e.zip64 ? 45 : e.isFolder ? 20 : 10)

const localHeader = (e: LaidEntry): Buffer => {
  const extra = e.zip64 ? 20 : 0
  const b = Buffer.alloc(30 + e.name.length + extra)
  b.writeUInt32LE(0x04034b50, 0)
  b.writeUInt16LE(versionNeeded(e), 4)
  b.writeUInt16LE(flags(e), 6)
  b.writeUInt16LE(0, 8) // stored
  const { time, date } = dosDateTime(e.entry.modifiedMs)
  b.writeUInt16LE(time, 10)
  b.writeUInt16LE(date, 12)
  b.writeUInt32LE(0, 14) // CRC in the data descriptor
  b.writeUInt32LE(e.zip64 ? MAX32 : 0, 18)
  b.writeUInt32LE(e.zip64 ? MAX32 : 0, 22)
  b.writeUInt16LE(e.name.length, 26)
  b.writeUInt16LE(extra, 28)
  e.name.copy(b, 30)
  if (e.zip64) {
    const at = 30 + e.name.length
    b.writeUInt16LE(0x0001, at)
    b.writeUInt16LE(16, at + 2)
    b.writeBigUInt64LE(0n, at + 4)
    b.writeBigUInt64LE(0n, at + 12)
  }
  return b
}

const dataDescriptor = (e: LaidEntry): Buffer => {
  const b = Buffer.alloc(e.zip64 ? 24 : 16)
  b.writeUInt32LE(0x08074b50, 0)
  b.writeUInt32LE(e.crc >>> 0, 4)
  if (e.zip64) {
    b.writeBigUInt64LE(BigInt(e.entry.size), 8)
    b.writeBigUInt64LE(BigInt(e.entry.size), 16)
  } else {
    b.writeUInt32LE(e.entry.size, 8)
    b.writeUInt32LE(e.entry.size, 12)
  }
  return b
}

const centralExtraLength = (e: LaidEntry) => (e.zip64 ? 4 + 24 : 0)

const centralHeader = (e: LaidEntry): Buffer => {
  const extra = centralExtraLength(e)
  const b = Buffer.alloc(46 + e.name.length + extra)
  b.writeUInt32LE(0x02014b50, 0)
  b.writeUInt16LE((3 << 8) | 45, 4) // made by: Unix, 4.5
  b.writeUInt16LE(versionNeeded(e), 6)
  b.writeUInt16LE(flags(e), 8)
  b.writeUInt16LE(0, 10)
  const { time, date } = dosDateTime(e.entry.modifiedMs)
  b.writeUInt16LE(time, 12)
  b.writeUInt16LE(date, 14)
  b.writeUInt32LE(e.crc >>> 0, 16)
  b.writeUInt32LE(e.zip64 ? MAX32 : e.entry.size, 20)
  b.writeUInt32LE(e.zip64 ? MAX32 : e.entry.size, 24)
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
    b.writeBigUInt64LE(BigInt(e.entry.size), at + 4)
    b.writeBigUInt64LE(BigInt(e.entry.size), at + 12)
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
