/**
 * torrents/add `urls=https://…`: dlsync fetches the .torrent itself, as qBittorrent does,
 * and hands the intake its bytes. Why not the intake's `Url` source: a torrent's identity
 * is its info-hash, the hash the app computed from the same file and polls for; a URL
 * handed on as text would be identified by a hash of the URL, which the app never sees.
 *
 * Indexers (and Prowlarr's proxied links) often answer a torrent link with a redirect to a
 * magnet link: that becomes a `Magnet` source. Redirects to web addresses are followed (at
 * most MAX_REDIRECTS) by the outbound client (outbound/Outbound.ts), which bounds the whole
 * fetch by FETCH_TIMEOUT and its body by MAX_TORRENT_BYTES while it streams in.
 */
import { Duration, Effect } from "effect"
import type { IntakeSource } from "../intake/Intake.ts"
import { fetchPublic, Outbound } from "../outbound/Outbound.ts"

export const MAX_TORRENT_BYTES = 16 * 1024 * 1024
export const FETCH_TIMEOUT = Duration.seconds(30)
export const MAX_REDIRECTS = 5

/** The source behind a torrent URL, or the problem in one line; one pool for the fetch and its redirects, closed after it. */
export const fetchTorrentUrl = (url: string): Effect.Effect<IntakeSource, string> =>
  fetchFollowing(url).pipe(Effect.provide(Outbound.layer))

// ---------------------------------------------------------------------------------------

const fetchFollowing = Effect.fnUntraced(function* (first: string): Effect.fn.Return<IntakeSource, string, Outbound> {
  const answer = yield* fetchPublic(first, {
    accept: "application/x-bittorrent, */*",
    timeoutMs: Duration.toMillis(FETCH_TIMEOUT),
    maxBytes: MAX_TORRENT_BYTES,
    redirects: MAX_REDIRECTS
  }).pipe(Effect.mapError((failure) => `cannot fetch ${shown(first)}: ${failure.reason}`))
  const location = answer.headers.location
  if (answer.status >= 300 && answer.status < 400 && location !== undefined) {
    if (/^magnet:/i.test(location)) return { _tag: "Magnet", uri: location }
    const next = URL.canParse(location, answer.url.href) ? new URL(location, answer.url.href).href : location
    return yield* Effect.fail(
      /^https?:/i.test(next)
        ? `${shown(first)} redirects more than ${MAX_REDIRECTS} times`
        : `${shown(first)} redirects to ${shown(next)}, not a web address`
    )
  }
  if (answer.status !== 200) return yield* Effect.fail(`cannot fetch ${shown(first)}: HTTP ${answer.status}`)
  const content = answer.body
  const text = new TextDecoder().decode(content.subarray(0, 7))
  if (text.toLowerCase() === "magnet:") return { _tag: "Magnet", uri: new TextDecoder().decode(content).trim() }
  // Every .torrent is a bencoded dictionary: "d" … "e".
  if (content[0] !== 0x64) return yield* Effect.fail(`${shown(first)} is not a .torrent file`)
  return { _tag: "TorrentFile", fileName: fileNameOf(answer.url.href), content }
})

const fileNameOf = (url: string): string => {
  const last = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "")
  return last === "" ? "download.torrent" : last
}

/** A URL for a log line: origin and path only (query strings carry indexer keys). */
const shown = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return "the URL"
  }
}
