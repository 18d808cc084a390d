/**
 * torrents/add `urls=https://…`: dlsync fetches the .torrent itself, as qBittorrent does,
 * and hands the intake its bytes. Why not the intake's `Url` source: a torrent's identity
 * is its info-hash, the hash the app computed from the same file and polls for; a URL
 * handed on as text would be identified by a hash of the URL, which the app never sees.
 *
 * Indexers (and Prowlarr's proxied links) often answer a torrent link with a redirect to a
 * magnet link: that becomes a `Magnet` source. Redirects are followed by hand (at most
 * MAX_REDIRECTS); the whole fetch is bounded by FETCH_TIMEOUT and MAX_TORRENT_BYTES.
 */
import { Duration, Effect } from "effect"
import { Agent, request } from "../api/undiciAgent.ts"
import type { IntakeSource } from "../intake/Intake.ts"

export const MAX_TORRENT_BYTES = 16 * 1024 * 1024
export const FETCH_TIMEOUT = Duration.seconds(30)
export const MAX_REDIRECTS = 5

/** The source behind a torrent URL, or the problem in one line. */
export const fetchTorrentUrl = (url: string): Effect.Effect<IntakeSource, string> =>
  Effect.tryPromise({
    try: (signal) => fetchFollowing(url, signal),
    catch: (e) => (e instanceof FetchProblem ? e.message : `cannot fetch ${shown(url)}: ${describe(e)}`)
  }).pipe(
    Effect.timeoutOrElse({
      duration: FETCH_TIMEOUT,
      orElse: () => Effect.fail(`cannot fetch ${shown(url)}: no answer within ${Duration.format(FETCH_TIMEOUT)}`)
    })
  )

// ---------------------------------------------------------------------------------------

class FetchProblem extends Error {}

/** One pool for the fetch and its redirects, closed after it: fetches are rare. */
const fetchFollowing = async (first: string, signal: AbortSignal): Promise<IntakeSource> => {
  const agent = new Agent()
  try {
    return await fetchWith(agent, first, signal)
  } finally {
    agent.destroy().catch(() => undefined)
  }
}

const fetchWith = async (agent: Agent, first: string, signal: AbortSignal): Promise<IntakeSource> => {
  let url = first
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const target = new URL(url)
    const response = await request(agent, {
      origin: target.origin,
      path: target.pathname + target.search,
      method: "GET",
      signal,
      headers: { accept: "application/x-bittorrent, */*" }
    })
    const location = response.headers.location
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === "string") {
      await response.body.dump()
      if (/^magnet:/i.test(location)) return { _tag: "Magnet", uri: location }
      url = new URL(location, url).href
      if (!/^https?:/i.test(url))
        throw new FetchProblem(`${shown(first)} redirects to ${shown(url)}, not a web address`)
      continue
    }
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw new FetchProblem(`cannot fetch ${shown(first)}: HTTP ${response.statusCode}`)
    }
    const content = await readBounded(response.body, first)
    const text = new TextDecoder().decode(content.subarray(0, 7))
    if (text.toLowerCase() === "magnet:") return { _tag: "Magnet", uri: new TextDecoder().decode(content).trim() }
    // Every .torrent is a bencoded dictionary: "d" … "e".
    if (content[0] !== 0x64) throw new FetchProblem(`${shown(first)} is not a .torrent file`)
    return { _tag: "TorrentFile", fileName: fileNameOf(url), content }
  }
  throw new FetchProblem(`${shown(first)} redirects more than ${MAX_REDIRECTS} times`)
}

const readBounded = async (body: AsyncIterable<Uint8Array>, url: string): Promise<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > MAX_TORRENT_BYTES) {
      throw new FetchProblem(`${shown(url)} is larger than ${MAX_TORRENT_BYTES / 1024 / 1024} MiB, not a .torrent file`)
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

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

const describe = (e: unknown): string =>
  e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)
