/**
 * undici's Agent (a keep-alive pool per origin) and its `request` call, loaded without the
 * rest of undici. The package's entry loads all of it, fetch, WebSocket, caches, mocks and
 * interceptors with the zlib, dns, perf_hooks and worker_threads modules they need:
 * ≈ 1.4 MB of source and ≈ 11 MB of the process's RSS, for the dispatcher API (`dispatch`,
 * `destroy`) that the API transport and the transfer engine use and the `request` that
 * fetches a .torrent (qbittorrent/fetchTorrentUrl.ts; importing it from the entry cost an
 * idle daemon ≈ 2 MB more, bench/memory.ts).
 */
import type * as Undici from "undici"
import requestCall from "undici/lib/api/api-request.js"
import AgentClass from "undici/lib/dispatcher/agent.js"

export const Agent: typeof Undici.Agent = AgentClass
export type Agent = Undici.Agent

/** `dispatcher.request(options)`: the package's entry adds it to every dispatcher, we call it on one. */
export const request = (
  dispatcher: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions
): Promise<Undici.Dispatcher.ResponseData> => requestCall.call(dispatcher, options)
