/**
 * What a torrent's source tells before the service has its files: the .torrent's metadata
 * (its files, size, pieces, privacy, comment, trackers), a magnet's trackers and name.
 * qBittorrent shows a torrent added stopped with its size and files from the .torrent
 * itself, and a magnet_uri carrying its trackers; the surface does the same from these
 * facts until the service's files are known. Pure.
 */
import { magnetDecode } from "@ctrl/magnet-link"
import { files as torrentFiles, info as torrentInfo } from "@ctrl/torrent-file"
import type { IntakeSource } from "../intake/Intake.ts"

export interface SourceFacts {
  /** The tracker URLs, in the order given (the first tier first). */
  readonly trackers: ReadonlyArray<string>
  /** Present for a .torrent (qBittorrent's "has metadata"); absent for a magnet. */
  readonly metadata?: TorrentMetadata
}

export interface TorrentMetadata {
  /** Paths relative to the torrent's save path with "/" (its folder first for a multi-file torrent). */
  readonly files: ReadonlyArray<{ readonly name: string; readonly size: number }>
  readonly size: number
  readonly multiFile: boolean
  readonly pieceSize: number
  readonly pieces: number
  readonly isPrivate: boolean
  readonly comment: string
  readonly createdBy: string
  /** Seconds since the epoch, 0 when the .torrent has none (as qBittorrent shows it). */
  readonly creationDate: number
}

const NONE: SourceFacts = { trackers: [] }

export const sourceFacts = (source: IntakeSource): SourceFacts => {
  switch (source._tag) {
    case "Magnet":
      return magnetFacts(source.uri)
    case "TorrentFile":
      return torrentFacts(source.content)
    default:
      return NONE
  }
}

/**
 * The magnet qBittorrent shows for a torrent: `xt`, `dn` and each tracker, percent-encoded
 * (qBittorrent writes lowercase hex digits; the apps decode either).
 */
export const magnetUri = (hash: string, name: string, trackers: ReadonlyArray<string>): string =>
  [`magnet:?xt=urn:btih:${hash}`, `dn=${encode(name)}`, ...trackers.map((t) => `tr=${encode(t)}`)].join("&")

// ---------------------------------------------------------------------------------------

const encode = (value: string): string => encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())

const magnetFacts = (uri: string): SourceFacts => {
  try {
    const decoded = magnetDecode(uri)
    const tr = decoded.tr === undefined ? [] : Array.isArray(decoded.tr) ? decoded.tr : [decoded.tr]
    return { trackers: [...new Set(tr)] }
  } catch {
    return NONE
  }
}

const torrentFacts = (content: Uint8Array): SourceFacts => {
  try {
    const meta = torrentInfo(content)
    const layout = torrentFiles(content)
    const multiFile = layout.files.length !== 1 || layout.files[0]?.path.includes("/") === true
    const files = layout.files.map((f) => ({ name: f.path.split(/[\\/]/).join("/"), size: f.length }))
    return {
      trackers: meta.announce,
      metadata: {
        files,
        size: layout.length,
        multiFile,
        pieceSize: layout.pieceLength,
        pieces: layout.pieceLength > 0 ? Math.ceil(layout.length / layout.pieceLength) : 0,
        isPrivate: meta.private === true,
        comment: meta.comment ?? "",
        createdBy: meta.createdBy ?? "",
        creationDate: meta.created === undefined ? 0 : Math.floor(meta.created.getTime() / 1000)
      }
    }
  } catch {
    return NONE
  }
}
