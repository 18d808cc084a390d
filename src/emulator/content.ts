/**
 * File content. Generated content is a pure function of (content key, offset), so a
 * multi-GB file needs no disk and a test can check any byte it received:
 *
 *   every 64 KiB block starts with 8 header bytes: the block index (u32 BE) and a per-key
 *   tag (u32 BE); the other bytes repeat a per-key pseudo-random pattern of prime length
 *   65,521, indexed by the absolute offset.
 *
 * A byte written at the wrong offset therefore shows, whether off by a little or by whole
 * blocks. Filling copies slices of a cached pattern (extended by one block so any slice is
 * contiguous), and the CDN sends such slices without copying, which is what lets it
 * serve well beyond 1 GB/s. With a content directory, `<dir>/<file id>` is served instead
 * when it exists.
 */
import { createHash } from "node:crypto"
import { open } from "node:fs/promises"
import { join } from "node:path"
import type { Item } from "./item.ts"

/** The key of an item's current bytes: editing the content gives new bytes. */
export const contentKey = (fileId: string, contentVersion = 1): string =>
  contentVersion === 1 ? fileId : `${fileId}#${contentVersion}`

/** The byte at `offset` of the generated content for `key`. */
export const contentByte = (key: string, offset: number): number => {
  const buffer = Buffer.alloc(1)
  fillContent(key, offset, buffer)
  return buffer[0]!
}

/** Fills `buffer` with the generated content of `key` starting at `offset`. */
export const fillContent = (key: string, offset: number, buffer: Buffer): void => {
  const { pattern, tag } = patternFor(key)
  const header = Buffer.alloc(HEADER)
  let position = 0
  while (position < buffer.length) {
    const absolute = offset + position
    const block = Math.floor(absolute / BLOCK)
    const within = absolute - block * BLOCK
    if (within < HEADER) {
      header.writeUInt32BE(block >>> 0, 0)
      header.writeUInt32BE(tag, 4)
      position += header.copy(buffer, position, within, Math.min(HEADER, within + buffer.length - position))
      continue
    }
    const length = Math.min(BLOCK - within, buffer.length - position)
    const start = absolute % PERIOD
    position += pattern.copy(buffer, position, start, start + length)
  }
}

/**
 * The generated content of `key` in [offset, offset + length) as views: fresh 8-byte block
 * headers and zero-copy slices of the cached pattern. The views must not be written to.
 */
export const contentSlices = (key: string, offset: number, length: number): Array<Buffer> => {
  const { pattern, tag } = patternFor(key)
  const out: Array<Buffer> = []
  let position = 0
  while (position < length) {
    const absolute = offset + position
    const block = Math.floor(absolute / BLOCK)
    const within = absolute - block * BLOCK
    if (within < HEADER) {
      const header = Buffer.allocUnsafe(HEADER)
      header.writeUInt32BE(block >>> 0, 0)
      header.writeUInt32BE(tag, 4)
      const piece = header.subarray(within, Math.min(HEADER, within + length - position))
      out.push(piece)
      position += piece.length
      continue
    }
    const size = Math.min(BLOCK - within, length - position)
    const start = absolute % PERIOD
    out.push(pattern.subarray(start, start + size))
    position += size
  }
  return out
}

export interface ContentHandle {
  readonly size: number
  /** Fills `buffer` with the bytes at `offset`; the range lies within `size`. */
  read(offset: number, buffer: Buffer): Promise<void>
  /** Zero-copy views of the bytes (generated content only). */
  readonly slices?: (offset: number, length: number) => Array<Buffer>
  close(): Promise<void>
}

export interface ContentSource {
  open(item: Item): Promise<ContentHandle>
}

export const makeContentSource = (contentDir: string | undefined): ContentSource => ({
  open: async (item) => {
    if (contentDir !== undefined) {
      const handle = await open(join(contentDir, item.id), "r").catch(() => undefined)
      if (handle !== undefined) {
        const { size } = await handle.stat()
        return {
          size,
          read: async (offset, buffer) => {
            let done = 0
            while (done < buffer.length) {
              const { bytesRead } = await handle.read(buffer, done, buffer.length - done, offset + done)
              if (bytesRead === 0) throw new Error(`${item.id} shrank while being served`)
              done += bytesRead
            }
          },
          close: () => handle.close()
        }
      }
    }
    const key = contentKey(item.id, item.contentVersion)
    return {
      size: item.sizeBytes,
      read: async (offset, buffer) => fillContent(key, offset, buffer),
      slices: (offset, length) => contentSlices(key, offset, length),
      close: async () => {}
    }
  }
})

const BLOCK = 65_536
const HEADER = 8
const PERIOD = 65_521

const patterns = new Map<string, { readonly pattern: Buffer; readonly tag: number }>()

const patternFor = (key: string): { readonly pattern: Buffer; readonly tag: number } => {
  const cached = patterns.get(key)
  if (cached !== undefined) return cached
  const digest = createHash("sha256").update(key).digest()
  let state = digest.readUInt32BE(0) || 0x9e3779b9
  const tag = digest.readUInt32BE(4)
  // PERIOD + BLOCK bytes: a slice of up to one block from any start < PERIOD stays inside.
  const pattern = Buffer.allocUnsafe(PERIOD + BLOCK)
  for (let i = 0; i < PERIOD; i += 4) {
    // xorshift32
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    for (let j = 0; j < 4 && i + j < PERIOD; j++) pattern[i + j] = (state >>> (j * 8)) & 0xff
  }
  pattern.copy(pattern, PERIOD, 0, BLOCK)
  if (patterns.size >= 256) patterns.delete(patterns.keys().next().value ?? "")
  const entry = { pattern, tag }
  patterns.set(key, entry)
  return entry
}
