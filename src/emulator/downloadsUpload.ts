/**
 * POST /downloads/upload: a multipart/form-data body (RFC 7578) with one `file` part holding
 * a .torrent (bencoded, BEP 3) or an .nzb (XML), plus optional text parts `client_reference`,
 * `webhook_url` and `directory`.
 */
import { createHash } from "node:crypto"
import { type PlannedFile, type Source, sizeFor } from "./downloadsSources.ts"

export interface FormPart {
  readonly name: string
  readonly fileName: string | undefined
  readonly contentType: string | undefined
  readonly data: Buffer
}

/** The parts of a multipart/form-data body, or the reason it is malformed. */
export const parseMultipart = (contentType: string, body: Buffer): ReadonlyArray<FormPart> | string => {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const marker = boundary?.[1] ?? boundary?.[2]
  if (marker === undefined) return "multipart/form-data needs a boundary"
  const delimiter = Buffer.from(`--${marker}`)
  const parts: Array<FormPart> = []
  let at = body.indexOf(delimiter)
  if (at < 0) return "no multipart boundary in the body"
  for (;;) {
    at += delimiter.length
    if (body.subarray(at, at + 2).toString() === "--") return parts
    if (body.subarray(at, at + 2).toString() !== "\r\n") return "malformed multipart boundary line"
    const headerEnd = body.indexOf("\r\n\r\n", at)
    if (headerEnd < 0) return "multipart part without headers"
    const headers = body
      .subarray(at + 2, headerEnd)
      .toString("utf8")
      .split("\r\n")
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headerEnd + 4)
    if (next < 0) return "multipart body is not terminated"
    const disposition = headers.find((h) => h.toLowerCase().startsWith("content-disposition:")) ?? ""
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1]
    if (name === undefined) return "multipart part without a name"
    const fileName = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1]
    const type = headers.find((h) => h.toLowerCase().startsWith("content-type:"))
    parts.push({
      name,
      fileName,
      contentType: type?.slice("content-type:".length).trim().toLowerCase(),
      data: body.subarray(headerEnd + 4, next)
    })
    at = next + 2
  }
}

/**
 * The source an uploaded file describes: a torrent or an NZB, by extension or content type.
 * `unsupported` (→ 415) for other types, `invalid` (→ 422) for a malformed file.
 */
export const uploadedSource = (
  part: FormPart
): { readonly source: Source } | { readonly unsupported: string } | { readonly invalid: string } => {
  const fileName = part.fileName ?? ""
  const lower = fileName.toLowerCase()
  if (lower.endsWith(".torrent") || part.contentType === "application/x-bittorrent") {
    const torrent = parseTorrent(part.data)
    if (typeof torrent === "string") return { invalid: torrent }
    return { source: { type: "torrent", fileName, ...torrent } }
  }
  if (lower.endsWith(".nzb") || part.contentType === "application/x-nzb") {
    const text = part.data.toString("utf8")
    if (!/<nzb[\s>]/.test(text)) return { invalid: "The .nzb file has no <nzb> element" }
    const base = fileName.replace(/\.nzb$/i, "") || "upload"
    // Each <file>: its name from the subject's quoted part, its size from its segments' bytes.
    const sizes = new Map<string, number>()
    for (const m of text.matchAll(/<file\b[^>]*subject="[^"]*?&quot;([^&"]+)&quot;[^>]*>([\s\S]*?)<\/file>/g)) {
      const name = m[1] ?? ""
      const bytes = [...(m[2] ?? "").matchAll(/<segment\b[^>]*\bbytes="(\d+)"/g)].reduce((n, s) => n + Number(s[1]), 0)
      if (name !== "" && !sizes.has(name)) sizes.set(name, bytes)
    }
    const names = [...text.matchAll(/subject="[^"]*?&quot;([^&"]+)&quot;/g)].map((m) => m[1] ?? "")
    const unique = [...new Set(names.filter((n) => n !== ""))]
    const files = (unique.length > 0 ? unique : [`${base}.mkv`]).map((path) => ({
      path: path.replaceAll("/", "_"),
      sizeBytes: (sizes.get(path) ?? 0) > 0 ? (sizes.get(path) ?? 0) : sizeFor(`${base}:${path}`)
    }))
    return { source: { type: "nzb", fileName, name: base, files } }
  }
  return { unsupported: "Upload a .torrent or an .nzb file" }
}

/** Name, info hash and files of a bencoded torrent, or why it is malformed. */
export const parseTorrent = (
  data: Buffer
): { readonly name: string; readonly infoHash: string; readonly files: ReadonlyArray<PlannedFile> } | string => {
  let decoded: { value: Bencode; end: number }
  try {
    decoded = decodeBencode(data, 0)
  } catch (error) {
    return `The .torrent file is not valid bencode: ${error instanceof Error ? error.message : String(error)}`
  }
  const root = decoded.value
  if (!(root instanceof Map)) return "The .torrent file is not a dictionary"
  const info = root.get("info")
  if (!(info instanceof Map)) return "The .torrent file has no info dictionary"
  const span = infoSpan(data)
  const name = text(info.get("name"))
  if (name === undefined || name === "") return "The torrent's info has no name"
  const length = info.get("length")
  const files: Array<PlannedFile> = []
  if (typeof length === "number") files.push({ path: name, sizeBytes: length })
  else {
    const list = info.get("files")
    if (!Array.isArray(list) || list.length === 0) return "The torrent's info has neither length nor files"
    for (const entry of list) {
      if (!(entry instanceof Map)) return "A torrent file entry is not a dictionary"
      const size = entry.get("length")
      const path = entry.get("path")
      if (typeof size !== "number" || !Array.isArray(path) || path.length === 0)
        return "A torrent file entry is malformed"
      const segments = path.map(text)
      if (segments.some((s) => s === undefined || s === "" || s === "." || s === "..")) {
        return "A torrent file path is malformed"
      }
      files.push({ path: segments.join("/"), sizeBytes: size })
    }
  }
  const infoHash = createHash("sha1")
    .update(span === undefined ? Buffer.alloc(0) : data.subarray(span.start, span.end))
    .digest("hex")
  return { name: name.replaceAll("/", "_"), infoHash, files }
}

/** Bencode values: byte strings, integers, lists and dictionaries (keys as latin1 strings). */
export type Bencode = Buffer | number | ReadonlyArray<Bencode> | ReadonlyMap<string, Bencode>

const decodeBencode = (data: Buffer, at: number): { value: Bencode; end: number } => {
  const c = data[at]
  if (c === undefined) throw new Error("unexpected end")
  if (c === 0x69) {
    const end = data.indexOf(0x65, at)
    const digits = data.subarray(at + 1, end).toString("latin1")
    if (end < 0 || !/^(0|-?[1-9]\d*)$/.test(digits)) throw new Error("bad integer")
    return { value: Number(digits), end: end + 1 }
  }
  if (c === 0x6c) {
    const items: Array<Bencode> = []
    let i = at + 1
    while (data[i] !== 0x65) {
      const item = decodeBencode(data, i)
      items.push(item.value)
      i = item.end
    }
    return { value: items, end: i + 1 }
  }
  if (c === 0x64) {
    const map = new Map<string, Bencode>()
    let i = at + 1
    while (data[i] !== 0x65) {
      const key = decodeBencode(data, i)
      if (!Buffer.isBuffer(key.value)) throw new Error("dictionary key is not a string")
      const value = decodeBencode(data, key.end)
      map.set(key.value.toString("latin1"), value.value)
      i = value.end
    }
    return { value: map, end: i + 1 }
  }
  if (c >= 0x30 && c <= 0x39) {
    const colon = data.indexOf(0x3a, at)
    const length = Number(data.subarray(at, colon).toString("latin1"))
    if (colon < 0 || !Number.isSafeInteger(length) || colon + 1 + length > data.length) {
      throw new Error("bad string length")
    }
    return { value: data.subarray(colon + 1, colon + 1 + length), end: colon + 1 + length }
  }
  throw new Error(`unexpected byte ${c}`)
}

/** Byte range of the top-level `info` value (its SHA-1 is the info hash). */
const infoSpan = (data: Buffer): { start: number; end: number } | undefined => {
  let i = 1
  while (i < data.length && data[i] !== 0x65) {
    const key = decodeBencode(data, i)
    const value = decodeBencode(data, key.end)
    if (Buffer.isBuffer(key.value) && key.value.toString("latin1") === "info") return { start: key.end, end: value.end }
    i = value.end
  }
  return undefined
}

const text = (value: Bencode | undefined): string | undefined =>
  Buffer.isBuffer(value) ? value.toString("utf8") : undefined
