/**
 * One run of the indexing benchmark (bench/index.ts), in a fresh process: bundled by the
 * orchestrator with scripts/build.ts, as the CLI ships, and run from that bundle.
 *
 *   node indexWorker.mjs --base URL --token T --state DIR   → one JSON line (IndexRun)
 *
 * 1. indexes the account from scratch through the change feed: time, RSS sampled every
 *    20 ms, maxRSS of the process;
 * 2. makes one idle poll against the full store: requests made and CPU time.
 *
 * DLSYNC_BENCH_MEMORY=1 also samples the heap, external memory and the young generation
 * during the index, and (with --expose-gc) prints the heap after a full GC on stderr.
 */

import { parseArgs } from "node:util"
import * as V8 from "node:v8"
import { Effect, Layer, Redacted } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { ApiObserver } from "../src/api/ApiHttp.ts"
import { Credentials } from "../src/api/Credentials.ts"
import { RemoteSync } from "../src/engine/RemoteSync.ts"
import { Posters } from "../src/posters/Posters.ts"
import { Database } from "../src/store/Database.ts"
import { Store } from "../src/store/Store.ts"

export interface IndexRun {
  readonly items: number
  readonly pages: number
  readonly indexMs: number
  /** CPU time (user + system) of the index: less sensitive than wall time to a busy machine. */
  readonly indexCpuMs: number
  /** maxRSS of the whole process, module loading included. */
  readonly peakRssMb: number
  /** The highest RSS sampled while indexing, and the RSS just before. */
  readonly indexRssMb: number
  readonly startRssMb: number
  readonly idleRequests: number
  readonly idleCpuMs: number
  readonly idleWallMs: number
  /** DLSYNC_BENCH_MEMORY only: the highest of each while indexing, MB. */
  readonly memory?: Readonly<Record<string, number>>
}

const { values: args } = parseArgs({
  options: { base: { type: "string" }, token: { type: "string" }, state: { type: "string" } }
})
const detailed = process.env.DLSYNC_BENCH_MEMORY !== undefined
const MB = 1024 * 1024

const base = args.base ?? ""
const layer = RemoteSync.layer.pipe(
  Layer.provideMerge(Store.layer),
  Layer.provide(Database.layer(args.state ?? "")),
  Layer.provide(
    ApiClient.layerLive({ baseUrl: base, authUrl: new URL(base).origin }).pipe(
      Layer.provide([Credentials.apiKey(Redacted.make(args.token ?? "")), ApiObserver.none])
    )
  ),
  Layer.provide(Posters.off)
)

const program = Effect.gen(function* () {
  const sync = yield* RemoteSync
  const store = yield* Store
  const startRss = process.memoryUsage().rss
  if (detailed) process.stderr.write(`before index ${JSON.stringify(process.memoryUsage())}\n`)
  let indexRss = startRss
  const highest: Record<string, number> = {}
  const sampler = setInterval(() => {
    const usage = process.memoryUsage()
    indexRss = Math.max(indexRss, usage.rss)
    if (detailed) sampleDetail(usage, highest)
  }, 20)
  const t0 = performance.now()
  const indexCpu0 = process.cpuUsage()
  const index = yield* sync.catchUp({ fullListing: true, probeFeed: false })
  const indexMs = performance.now() - t0
  const indexCpu = process.cpuUsage(indexCpu0)
  clearInterval(sampler)
  if (detailed) {
    process.stderr.write(`after index  ${JSON.stringify(process.memoryUsage())}\n`)
    const gc = Reflect.get(globalThis, "gc")
    if (typeof gc === "function") gc()
    process.stderr.write(`after gc ${JSON.stringify(process.memoryUsage())}\n`)
  }
  const items = yield* store.remote.count
  const cpu0 = process.cpuUsage()
  const w0 = performance.now()
  const idle = yield* sync.catchUp({ fullListing: false, probeFeed: false })
  const idleWallMs = performance.now() - w0
  const cpu = process.cpuUsage(cpu0)
  const run: IndexRun = {
    items,
    pages: index.pages,
    indexMs,
    indexCpuMs: (indexCpu.user + indexCpu.system) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    indexRssMb: indexRss / MB,
    startRssMb: startRss / MB,
    idleRequests: idle.requests,
    idleCpuMs: (cpu.user + cpu.system) / 1000,
    idleWallMs,
    ...(detailed ? { memory: highest } : {})
  }
  return run
})

const run = await Effect.runPromise(program.pipe(Effect.provide(layer)))
process.stdout.write(`${JSON.stringify(run)}\n`)

// ---------------------------------------------------------------------------------------

/** Keeps the highest heap, external and young-generation figures seen so far. */
function sampleDetail(usage: NodeJS.MemoryUsage, highest: Record<string, number>): void {
  const keep = (name: string, bytes: number) => {
    highest[name] = Math.max(highest[name] ?? 0, Math.round((bytes / MB) * 10) / 10)
  }
  keep("heapUsed", usage.heapUsed)
  keep("heapTotal", usage.heapTotal)
  keep("external", usage.external)
  keep("arrayBuffers", usage.arrayBuffers)
  for (const space of V8.getHeapSpaceStatistics()) keep(space.space_name, space.space_size)
}
