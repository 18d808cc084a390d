/**
 * The spec's file or folder record, rendered from an item. Optional includes appear only
 * when asked for: `media` as a summary in listings and in full in file detail (null for
 * anything but video files), `poster` (null when unavailable), `app_state` (null when the
 * calling application stored nothing).
 */
import { createHash } from "node:crypto"
import { formatMicros } from "./clock.ts"
import type { Item, PosterSpec } from "./item.ts"
import { mediaSummary } from "./media.ts"

export interface RecordOptions {
  readonly media: "none" | "summary" | "full"
  readonly poster: boolean
  /** Base of poster URLs (the CDN origin). */
  readonly posterBase: string
  /** The app_state value to include, or undefined to leave the field out. */
  readonly appState?: unknown
}

export const renderItem = (item: Item, options: RecordOptions): Record<string, unknown> => {
  const record: Record<string, unknown> = {
    id: item.id,
    parent_id: item.parentId,
    download_id: item.downloadId,
    name: item.name,
    type: item.type,
    kind: item.kind,
    size_bytes: item.sizeBytes,
    mime_type: item.mimeType,
    locked: item.locked,
    expires_at: formatMicros(item.expiresAt),
    created_at: formatMicros(item.createdAt),
    updated_at: formatMicros(item.updatedAt)
  }
  if (options.media !== "none") {
    const media = item.type === "file" && item.kind === "video" ? item.media : null
    record.media = media === null ? null : options.media === "full" ? media : mediaSummary(media)
  }
  if (options.poster)
    record.poster = item.poster === null ? null : renderPoster(item.poster, item.id, options.posterBase)
  if (options.appState !== undefined) record.app_state = options.appState
  return record
}

/** A change-feed tombstone: only id, parent_id and deleted. */
export const renderTombstone = (id: string, parentId: string | null) => ({ id, parent_id: parentId, deleted: true })

export const renderPoster = (poster: PosterSpec, itemId: string, posterBase: string) => ({
  url: `${posterBase}/posters/${posterHash(poster, itemId)}.webp`,
  expires_at: null,
  width: poster.width,
  height: poster.height,
  mime_type: "image/webp",
  dominant_color: poster.dominantColor
})

/** Content address of a poster: the SHA-256 of its bytes. */
export const posterHash = (poster: PosterSpec, itemId: string): string =>
  createHash("sha256").update(posterBytes(poster, itemId)).digest("hex")

/**
 * The poster image: a valid lossless WebP (1×1, the dominant colour) followed by a chunk
 * naming the item, so different items have different bytes and thus different URLs.
 */
export const posterBytes = (poster: PosterSpec, itemId: string): Buffer => {
  const vp8l = Buffer.from("2f00000010071011118888fe07", "hex")
  const note = Buffer.from(`dlsync-emulator poster ${itemId} ${poster.width}x${poster.height} ${poster.dominantColor}`)
  const chunk = (fourcc: string, data: Buffer) => {
    const head = Buffer.alloc(8)
    head.write(fourcc, 0, "ascii")
    head.writeUInt32LE(data.length, 4)
    return Buffer.concat([head, data, Buffer.alloc(data.length % 2)])
  }
  const body = Buffer.concat([Buffer.from("WEBP"), chunk("VP8L", vp8l), chunk("NOTE", note)])
  const riff = Buffer.alloc(8)
  riff.write("RIFF", 0, "ascii")
  riff.writeUInt32LE(body.length, 4)
  return Buffer.concat([riff, body])
}
