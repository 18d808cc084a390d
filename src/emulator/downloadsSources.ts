/**
 * What a download source holds, decided from the source alone so that the same source
 * always yields the same files, sizes and choices.
 *
 * The emulator's rules (the real service's are "not shown"):
 * - A URL is a direct download of one file named after its last path segment. A URL whose
 *   host starts with `multi.` first asks for a variant (one selection stage).
 * - A magnet (`xt=urn:btih:` with a 40-hex or 32-base32 hash) is a torrent of a folder named
 *   by `dn` holding a video and a subtitle. A `dn` containing `select` asks which file to
 *   fetch (one stage); containing `stages`, it asks for a quality, then for a file (two stages).
 * - An uploaded .torrent holds the files its info dictionary lists; an .nzb the files its
 *   subjects name, each as large as its `<segment bytes>` add up to (when given).
 * - Sizes are otherwise made up from the source (1 MiB to 1.5 GiB); a torrent's sample is a
 *   tenth of its video; a magnet's `xl` (BEP 9, exact length) makes its video file that large, and a URL's
 *   `size` query parameter makes its file that large, so tests can keep downloads small.
 * - A source whose name contains `fail` fails while downloading; one larger than the
 *   account's max_file_size_bytes fails while processing.
 */
import { createHash } from "node:crypto"

export type SourceType = "direct" | "torrent" | "usenet"

/** A source as the client gave it. */
export type Source =
  | { readonly type: "url"; readonly url: string }
  | {
      readonly type: "magnet"
      readonly magnet: string
      readonly infoHash: string
      readonly name: string
      /** `xl`: the video file's exact length, when the magnet gives it. */
      readonly length?: number | undefined
    }
  | {
      readonly type: "torrent"
      readonly fileName: string
      readonly infoHash: string
      readonly name: string
      readonly files: ReadonlyArray<PlannedFile>
    }
  | {
      readonly type: "nzb"
      readonly fileName: string
      readonly name: string
      readonly files: ReadonlyArray<PlannedFile>
    }

export interface PlannedFile {
  /** Relative path below the download's folder; may contain "/". */
  readonly path: string
  readonly sizeBytes: number
}

export interface SelectionItemSpec {
  readonly item_id: string
  readonly parent_id: string | null
  readonly selectable: boolean
  readonly name: string
  readonly size_bytes?: number
}

/** Either the next selection stage's items or the files to fetch. */
export type SourcePlan =
  | { readonly kind: "choose"; readonly items: ReadonlyArray<SelectionItemSpec> }
  | {
      readonly kind: "fetch"
      readonly type: SourceType
      readonly name: string
      /** Files land in a folder of this name under `directory` (torrents), or directly (others). */
      readonly folder: string | null
      readonly files: ReadonlyArray<PlannedFile>
    }

/** The source's name as shown in the download record. */
export const sourceName = (source: Source): string => {
  switch (source.type) {
    case "url":
      return urlFileName(source.url)
    default:
      return source.name
  }
}

/** The plan after the choices made so far (item ids, one per past stage). */
export const planSource = (source: Source, chosen: ReadonlyArray<string>): SourcePlan | undefined => {
  switch (source.type) {
    case "url": {
      const name = urlFileName(source.url)
      if (!new URL(source.url).hostname.startsWith("multi.")) {
        const size = Number(new URL(source.url).searchParams.get("size") ?? Number.NaN)
        const files = [
          Number.isSafeInteger(size) && size >= 0 ? { path: name, sizeBytes: size } : file(name, source.url)
        ]
        return chosen.length === 0 ? fetch("direct", name, null, files) : undefined
      }
      const variants = ["1080p", "720p", "480p"].map((q) => ({
        item_id: `v-${q}`,
        parent_id: null,
        selectable: true,
        name: withSuffix(name, q),
        size_bytes: sizeFor(`${source.url}#${q}`)
      }))
      if (chosen.length === 0) return { kind: "choose", items: variants }
      const picked = variants.find((v) => v.item_id === chosen[0])
      return picked && chosen.length === 1
        ? fetch("direct", picked.name, null, [{ path: picked.name, sizeBytes: picked.size_bytes }])
        : undefined
    }
    case "magnet": {
      const base = source.name
      const lower = base.toLowerCase()
      const files = torrentFiles(base, source.infoHash, source.length)
      if (lower.includes("stages")) {
        const qualities = ["2160p", "1080p"].map((q) => ({
          item_id: `q-${q}`,
          parent_id: null,
          selectable: true,
          name: q
        }))
        if (chosen.length === 0) return { kind: "choose", items: qualities }
        const quality = qualities.find((q) => q.item_id === chosen[0])
        if (quality === undefined) return undefined
        const variant = torrentFiles(`${base}.${quality.name}`, `${source.infoHash}:${quality.name}`, source.length)
        if (chosen.length === 1) return { kind: "choose", items: fileItems(base, variant) }
        return chosen.length === 2 ? pickFile(base, variant, chosen[1]) : undefined
      }
      if (lower.includes("select")) {
        if (chosen.length === 0) return { kind: "choose", items: fileItems(base, files) }
        return chosen.length === 1 ? pickFile(base, files, chosen[0]) : undefined
      }
      return chosen.length === 0 ? fetch("torrent", base, base, files) : undefined
    }
    case "torrent":
      return chosen.length === 0 ? fetch("torrent", source.name, source.name, source.files) : undefined
    case "nzb":
      return chosen.length === 0 ? fetch("usenet", source.name, null, source.files) : undefined
  }
}

/**
 * A magnet URI's info hash (lowercase) and display name, or the reason it is not one.
 * The hash is 40 hex digits or 32 base32 characters; `dn` defaults to the hash.
 */
export const parseMagnet = (
  magnet: string
): { readonly infoHash: string; readonly name: string; readonly length?: number } | { readonly problem: string } => {
  if (!magnet.startsWith("magnet:?")) return { problem: "magnet must start with magnet:?" }
  const params = new URLSearchParams(magnet.slice("magnet:?".length))
  const xt = params.getAll("xt").find((v) => v.toLowerCase().startsWith("urn:btih:"))
  const hash = xt?.slice("urn:btih:".length) ?? ""
  if (!/^[0-9a-fA-F]{40}$/.test(hash) && !/^[A-Za-z2-7]{32}$/.test(hash)) {
    return { problem: "magnet needs xt=urn:btih: with a 40-hex or 32-base32 info hash" }
  }
  const name = (params.get("dn") ?? "").trim()
  const xl = Number(params.get("xl") ?? Number.NaN)
  return {
    infoHash: hash.toLowerCase(),
    name: name === "" ? hash.toLowerCase() : name.replaceAll("/", "_"),
    ...(Number.isSafeInteger(xl) && xl > 0 ? { length: xl } : {})
  }
}

/** A deterministic size in bytes between 1 MiB and about 1.5 GiB. */
export const sizeFor = (seed: string): number => {
  const n = createHash("sha256").update(seed).digest().readUInt32BE(0)
  return 1024 * 1024 + (n % (1536 * 1024 * 1024))
}

const fetch = (
  type: SourceType,
  name: string,
  folder: string | null,
  files: ReadonlyArray<PlannedFile>
): SourcePlan => ({ kind: "fetch", type, name, folder, files })

const file = (path: string, seed: string): PlannedFile => ({ path, sizeBytes: sizeFor(seed) })

/** A torrent's files: its video, a subtitle and a sample a tenth of the video, as releases ship them. */
const torrentFiles = (base: string, seed: string, length?: number): ReadonlyArray<PlannedFile> => {
  const video = length ?? sizeFor(`${seed}:video`)
  return [
    { path: `${base}.mkv`, sizeBytes: video },
    { path: `Subs/${base}.en.srt`, sizeBytes: 20_000 + (sizeFor(`${seed}:srt`) % 80_000) },
    { path: `Extras/${base}.sample.mkv`, sizeBytes: Math.max(1, Math.floor(video / 10)) }
  ]
}

/** Selection items for a torrent's files: the root folder (not selectable) and one item per file. */
const fileItems = (base: string, files: ReadonlyArray<PlannedFile>): ReadonlyArray<SelectionItemSpec> => [
  { item_id: "root", parent_id: null, selectable: false, name: base },
  ...files.map((f, i) => ({
    item_id: `f${i + 1}`,
    parent_id: "root",
    selectable: true,
    name: f.path,
    size_bytes: f.sizeBytes
  }))
]

const pickFile = (
  base: string,
  files: ReadonlyArray<PlannedFile>,
  itemId: string | undefined
): SourcePlan | undefined => {
  const index = Number(itemId?.slice(1)) - 1
  const picked = itemId?.startsWith("f") ? files[index] : undefined
  return picked === undefined ? undefined : fetch("torrent", base, base, [picked])
}

const urlFileName = (url: string): string => {
  const last = new URL(url).pathname
    .split("/")
    .filter((s) => s !== "")
    .pop()
  let name = "download.bin"
  if (last !== undefined) {
    try {
      name = decodeURIComponent(last)
    } catch {
      name = last
    }
  }
  return name.replaceAll("/", "_")
}

const withSuffix = (name: string, suffix: string): string => {
  const dot = name.lastIndexOf(".")
  return dot > 0 ? `${name.slice(0, dot)}.${suffix}${name.slice(dot)}` : `${name}.${suffix}`
}
