/**
 * The supported source services (GET /services). Patterns are matching hints: each is a
 * regular-expression source and flags, compiled by the client.
 */
export interface SourceService {
  readonly code: string
  readonly name: string
  readonly type: "hoster" | "torrent" | "usenet" | "stream"
  readonly domains: ReadonlyArray<string>
  readonly status: "up" | "degraded" | "down"
  readonly url_patterns: ReadonlyArray<{ readonly source: string; readonly flags: string }>
}

/** Identifies the pattern set below; bump it when a pattern changes. */
export const PATTERN_VERSION = "2026.11.1"

export const SERVICES: ReadonlyArray<SourceService> = [
  {
    code: "magnet",
    name: "BitTorrent magnet",
    type: "torrent",
    domains: [],
    status: "up",
    url_patterns: [{ source: "^magnet:\\?xt=urn:btih:([a-f0-9]{40}|[a-z2-7]{32})", flags: "i" }]
  },
  {
    code: "filehost",
    name: "Example File Host",
    type: "hoster",
    domains: ["files.example.com", "fh.example.net"],
    status: "up",
    url_patterns: [
      { source: "^https?://(www\\.)?(files\\.example\\.com|fh\\.example\\.net)/f/[A-Za-z0-9]+", flags: "" }
    ]
  },
  {
    code: "videoshare",
    name: "Example Video Share",
    type: "stream",
    domains: ["video.example.org"],
    status: "degraded",
    url_patterns: [{ source: "^https://video\\.example\\.org/(watch\\?v=|v/)[\\w-]{11}", flags: "" }]
  },
  {
    code: "nzb",
    name: "Usenet (NZB)",
    type: "usenet",
    domains: [],
    status: "up",
    url_patterns: []
  },
  {
    code: "direct",
    name: "Direct HTTP link",
    type: "hoster",
    domains: [],
    status: "down",
    url_patterns: [{ source: "^https?://[^\\s/$.?#].[^\\s]*$", flags: "i" }]
  }
]
