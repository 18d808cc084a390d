/**
 * undici's Agent (a keep-alive pool per origin), loaded without the rest of undici. The
 * package's entry loads all of it, fetch, WebSocket, caches, mocks and interceptors with
 * the zlib, dns, perf_hooks and worker_threads modules they need: ≈ 1.4 MB of source and
 * ≈ 11 MB of the process's RSS, for the dispatcher API (`dispatch`, `destroy`) that is all
 * dlsync uses, in the API transport and the transfer engine.
 */
import type * as Undici from "undici"
import AgentClass from "undici/lib/dispatcher/agent.js"

export const Agent: typeof Undici.Agent = AgentClass
export type Agent = Undici.Agent
