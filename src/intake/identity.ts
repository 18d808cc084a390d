/**
 * The identity and the name of a release, computed from what a surface hands in, exactly
 * as the *arr apps compute the download id they later look the release up by:
 *
 * - a magnet: `btih:` + its v1 info-hash as 40 lowercase hex (a 32-character base32 btih is
 *   decoded); a v2-only magnet (`xt=urn:btmh:1220…`) gives the SHA-256 truncated to 20
 *   bytes, qBittorrent's torrent id for a v2 torrent. Name: `dn`, else the hash.
 * - a .torrent: `btih:` + SHA-1 of the bencoded `info` dictionary as it appears in the file
 *   (re-encoding would change it); v2-only files the truncated SHA-256. Name: `info.name`.
 * - an NZB: `sha256:` + SHA-256 of the bytes. Name: the file name without `.nzb`.
 * - a URL: `sha256:` + SHA-256 of the normalized URL (WHATWG serialization: lowercase
 *   scheme and host, default port dropped, no fragment). Name: its last path segment.
 *
 * Pure: no I/O. A source that cannot be read is an `invalid` IntakeError naming the problem.
 *
 * Every surface hands its releases in through here, so the caps below hold for all of them:
 * a name over MAX_NAME_BYTES, a magnet over MAX_MAGNET_LENGTH or with over MAX_TRACKERS
 * trackers, a URL over MAX_URL_LENGTH is refused, and a refusal quotes at most QUOTED
 * characters of what it was given: what an add logs stays a line.
 */
import { createHash } from "node:crypto"
import { magnetDecode } from "@ctrl/magnet-link"
import { hashes, info } from "@ctrl/torrent-file"
import { Result } from "effect"
import { IntakeId } from "../domain/IntakeId.ts"
import { IntakeError, type IntakeSource } from "./Intake.ts"

export interface Identified {
  readonly id: IntakeId
  readonly name: string
  /** The 40-hex info-hash for torrents and magnets (what the cache check takes), else null. */
  readonly infoHash: string | null
}

/**
 * A release name becomes a folder or file name, which file systems cap at 255 bytes
 * (NAME_MAX), and scene rules cap release names at 255 characters; 1024 bytes leaves room
 * for names in scripts of three or four bytes a character.
 */
export const MAX_NAME_BYTES = 1024

/**
 * A real magnet is its hash, its name and its trackers: well under 16 KiB with the 200
 * trackers of the longest public tracker lists.
 */
export const MAX_MAGNET_LENGTH = 64 * 1024

/** The longest public tracker lists hold about 100 to 200; libtorrent announces to them all. */
export const MAX_TRACKERS = 500

/** Web servers refuse request lines over 8 KiB (nginx, Apache's LimitRequestLine): no longer URL can be fetched. */
export const MAX_URL_LENGTH = 8 * 1024

export const identify = (source: IntakeSource): Result.Result<Identified, IntakeError> => {
  const identified = identifySource(source)
  if (Result.isFailure(identified)) return identified
  const bytes = Buffer.byteLength(identified.success.name, "utf8")
  return bytes > MAX_NAME_BYTES
    ? invalid(`the name ${quoted(identified.success.name)} is longer than ${MAX_NAME_BYTES} bytes (${bytes})`)
    : identified
}

/** `btih:<hex>` for a 40-hex info-hash. */
export const btihId = (hex: string): IntakeId => IntakeId.make(`btih:${hex.toLowerCase()}`)

// ---------------------------------------------------------------------------------------

const HEX40 = /^[0-9a-f]{40}$/

/** Characters of a refused input quoted in its problem. */
const QUOTED = 80

const identifySource = (source: IntakeSource): Result.Result<Identified, IntakeError> => {
  switch (source._tag) {
    case "Magnet":
      return identifyMagnet(source.uri)
    case "TorrentFile":
      return identifyTorrent(source.fileName, source.content)
    case "NzbFile":
      return identifyNzb(source.fileName, source.content)
    case "Url":
      return identifyUrl(source.url)
  }
}

const invalid = (problem: string) => Result.fail(new IntakeError({ reason: "invalid", problem }))

const identifyMagnet = (uri: string): Result.Result<Identified, IntakeError> => {
  if (uri.length > MAX_MAGNET_LENGTH) {
    return invalid(`the magnet link is longer than ${MAX_MAGNET_LENGTH} characters (${uri.length})`)
  }
  if (!/^magnet:\?/i.test(uri.trim())) return invalid("not a magnet link (it must start with magnet:?)")
  let parsed: ReturnType<typeof magnetDecode>
  try {
    parsed = magnetDecode(uri.trim())
  } catch {
    return invalid("not a magnet link: its info-hash cannot be decoded")
  }
  const v1 = parsed.infoHash?.toLowerCase()
  const v2 = parsed.infoHashV2?.toLowerCase()
  const hex =
    v1 !== undefined && HEX40.test(v1)
      ? v1
      : v2 !== undefined && /^[0-9a-f]{64}$/.test(v2)
        ? v2.slice(0, 40)
        : undefined
  if (hex === undefined) {
    return invalid("not a magnet link: it has no xt=urn:btih: (40 hex or 32 base32) or xt=urn:btmh:1220 info-hash")
  }
  const trackers = typeof parsed.tr === "string" ? 1 : (parsed.tr?.length ?? 0)
  if (trackers > MAX_TRACKERS) return invalid(`the magnet link names more than ${MAX_TRACKERS} trackers (${trackers})`)
  const dn = first(parsed.dn)?.trim()
  return Result.succeed({ id: btihId(hex), name: dn !== undefined && dn !== "" ? dn : hex, infoHash: hex })
}

const identifyTorrent = (fileName: string, content: Uint8Array): Result.Result<Identified, IntakeError> => {
  let hex: string | undefined
  let name: string | undefined
  try {
    const found = hashes(content)
    hex = found.infoHash ?? found.infoHashV2?.slice(0, 40)
    name = info(content).name
  } catch {
    return invalid(`${fileName}: not a torrent file (no bencoded info dictionary)`)
  }
  if (hex === undefined || !HEX40.test(hex.toLowerCase())) {
    return invalid(`${fileName}: not a torrent file (no info-hash)`)
  }
  const lower = hex.toLowerCase()
  return Result.succeed({ id: btihId(lower), name: name || stripExtension(fileName, ".torrent"), infoHash: lower })
}

const identifyNzb = (fileName: string, content: Uint8Array): Result.Result<Identified, IntakeError> => {
  const head = Buffer.from(content.subarray(0, 4096)).toString("utf8")
  if (content.byteLength === 0 || !/<nzb[\s>]/i.test(head)) {
    return invalid(`${fileName}: not an NZB file (no <nzb> element)`)
  }
  return Result.succeed({
    id: IntakeId.make(`sha256:${createHash("sha256").update(content).digest("hex")}`),
    name: stripExtension(fileName, ".nzb"),
    infoHash: null
  })
}

const identifyUrl = (text: string): Result.Result<Identified, IntakeError> => {
  const trimmed = text.trim()
  if (trimmed.length > MAX_URL_LENGTH) {
    return invalid(`the URL ${quoted(trimmed)} is longer than ${MAX_URL_LENGTH} characters (${trimmed.length})`)
  }
  if (!URL.canParse(trimmed)) return invalid(`not a URL: ${quoted(trimmed)}`)
  const url = new URL(trimmed)
  if (url.protocol !== "http:" && url.protocol !== "https:") return invalid(`not an http(s) URL: ${quoted(trimmed)}`)
  url.hash = ""
  const normalized = url.href
  const segment = url.pathname
    .split("/")
    .filter((s) => s !== "")
    .pop()
  return Result.succeed({
    id: IntakeId.make(`sha256:${createHash("sha256").update(normalized).digest("hex")}`),
    name: segment === undefined ? url.hostname : safeDecode(segment),
    infoHash: null
  })
}

/** The start of a refused input, for its problem. */
const quoted = (text: string): string => (text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text)

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

const stripExtension = (fileName: string, ext: string): string => {
  const base = fileName.split(/[\\/]/).pop() ?? fileName
  return base.toLowerCase().endsWith(ext) && base.length > ext.length ? base.slice(0, -ext.length) : base
}

const safeDecode = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
