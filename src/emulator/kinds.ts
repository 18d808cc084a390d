/** Item kinds and MIME types, derived from a file name the way the service classifies uploads. */
export const KINDS = ["folder", "video", "audio", "image", "document", "archive", "subtitle", "other"] as const
export type Kind = (typeof KINDS)[number]

const KIND_SET: ReadonlySet<string> = new Set(KINDS)

export const isKind = (value: string): value is Kind => KIND_SET.has(value)

/** The MIME type and kind of a file, from its extension (application/octet-stream, other when unknown). */
export const classify = (name: string): { readonly mimeType: string; readonly kind: Kind } => {
  const dot = name.lastIndexOf(".")
  const ext =
    dot > 0
      ? name
          .slice(dot + 1)
          .toLowerCase()
          .trim()
      : ""
  return BY_EXTENSION[ext] ?? { mimeType: "application/octet-stream", kind: "other" }
}

const BY_EXTENSION: Readonly<Record<string, { readonly mimeType: string; readonly kind: Kind }>> = {
  mkv: { mimeType: "video/x-matroska", kind: "video" },
  mp4: { mimeType: "video/mp4", kind: "video" },
  m4v: { mimeType: "video/x-m4v", kind: "video" },
  avi: { mimeType: "video/x-msvideo", kind: "video" },
  webm: { mimeType: "video/webm", kind: "video" },
  mov: { mimeType: "video/quicktime", kind: "video" },
  ts: { mimeType: "video/mp2t", kind: "video" },
  mp3: { mimeType: "audio/mpeg", kind: "audio" },
  flac: { mimeType: "audio/flac", kind: "audio" },
  m4a: { mimeType: "audio/mp4", kind: "audio" },
  ogg: { mimeType: "audio/ogg", kind: "audio" },
  wav: { mimeType: "audio/wav", kind: "audio" },
  jpg: { mimeType: "image/jpeg", kind: "image" },
  jpeg: { mimeType: "image/jpeg", kind: "image" },
  png: { mimeType: "image/png", kind: "image" },
  gif: { mimeType: "image/gif", kind: "image" },
  webp: { mimeType: "image/webp", kind: "image" },
  pdf: { mimeType: "application/pdf", kind: "document" },
  txt: { mimeType: "text/plain", kind: "document" },
  nfo: { mimeType: "text/plain", kind: "document" },
  md: { mimeType: "text/markdown", kind: "document" },
  epub: { mimeType: "application/epub+zip", kind: "document" },
  zip: { mimeType: "application/zip", kind: "archive" },
  rar: { mimeType: "application/vnd.rar", kind: "archive" },
  "7z": { mimeType: "application/x-7z-compressed", kind: "archive" },
  tar: { mimeType: "application/x-tar", kind: "archive" },
  gz: { mimeType: "application/gzip", kind: "archive" },
  srt: { mimeType: "application/x-subrip", kind: "subtitle" },
  vtt: { mimeType: "text/vtt", kind: "subtitle" },
  ass: { mimeType: "text/x-ssa", kind: "subtitle" },
  ssa: { mimeType: "text/x-ssa", kind: "subtitle" },
  sub: { mimeType: "text/x-microdvd", kind: "subtitle" }
}
