/**
 * The indexing benchmark (issue 4 §7):
 *
 *   node bench/index.ts [--runs 3] [--sizes 10000,100000]
 *
 * For each size, an emulator with that many files runs in its own process; each run is a
 * fresh worker process (so RSS and CPU are the indexer's alone) that:
 *   1. indexes the account from scratch through the change feed (pages of 100, one SQLite
 *      transaction each): items per second, peak RSS;
 *   2. makes one idle poll against the full store: requests made and CPU time.
 * The table shows medians (min–max) of the runs and the per-item cost ratio between the
 * largest and smallest size. DLSYNC_BENCH_MEMORY=1 (with NODE_OPTIONS=--expose-gc) also
 * prints the heap after the index, before and after a full GC (to tell garbage from a leak).
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { Effect, Layer, Redacted } from "effect"
import { ApiClient } from "../src/api/ApiClient.ts"
import { Credentials } from "../src/api/Credentials.ts"
import { RemoteSync } from "../src/engine/RemoteSync.ts"
import { Database } from "../src/store/Database.ts"
import { Store } from "../src/store/Store.ts"

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    sizes: { type: "string", default: "10000,100000" },
    worker: { type: "boolean", default: false },
    base: { type: "string" },
    token: { type: "string" },
    state: { type: "string" }
  }
})

const CLI = Path.resolve(import.meta.dirname, "../bin/dlsync.js")

interface WorkerResult {
  readonly items: number
  readonly pages: number
  readonly indexMs: number
  /** maxRSS of the whole process (includes loading the sources: Node's type stripping). */
  readonly peakRssMb: number
  /** RSS sampled every 20 ms while indexing: the highest, and the value just before. */
  readonly indexRssMb: number
  readonly startRssMb: number
  readonly idleRequests: number
  readonly idleCpuMs: number
  readonly idleWallMs: number
}

/** One index and one idle poll, in this (fresh) process; prints one JSON line. */
async function worker(): Promise<void> {
  const base = args.base ?? ""
  const layer = RemoteSync.layer.pipe(
    Layer.provideMerge(Store.layer),
    Layer.provide(Database.layer(args.state ?? "")),
    Layer.provide(
      ApiClient.layerLive({ baseUrl: base, authUrl: new URL(base).origin }).pipe(
        Layer.provide(Credentials.apiKey(Redacted.make(args.token ?? "")))
      )
    )
  )
  const program = Effect.gen(function* () {
    const sync = yield* RemoteSync
    const store = yield* Store
    const startRss = process.memoryUsage().rss
    let indexRss = startRss
    const sampler = setInterval(() => {
      indexRss = Math.max(indexRss, process.memoryUsage().rss)
    }, 20)
    const t0 = performance.now()
    const index = yield* sync.catchUp({ fullListing: true, probeFeed: false })
    const indexMs = performance.now() - t0
    clearInterval(sampler)
    if (process.env.DLSYNC_BENCH_MEMORY) {
      process.stderr.write(`${JSON.stringify(process.memoryUsage())}\n`)
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
    const result: WorkerResult = {
      items,
      pages: index.pages,
      indexMs,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      indexRssMb: indexRss / 1024 / 1024,
      startRssMb: startRss / 1024 / 1024,
      idleRequests: idle.requests,
      idleCpuMs: (cpu.user + cpu.system) / 1000,
      idleWallMs
    }
    return result
  })
  const result = await Effect.runPromise(program.pipe(Effect.provide(layer)))
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

async function orchestrate(): Promise<void> {
  const runs = Number(args.runs)
  const sizes = (args.sizes ?? "").split(",").map(Number)
  const rows: Array<{ size: number; results: Array<WorkerResult> }> = []
  for (const size of sizes) {
    const emulator = await startEmulatorProcess(size)
    const results: Array<WorkerResult> = []
    try {
      for (let run = 0; run < runs; run++) {
        const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-bench-index-"))
        try {
          results.push(runWorker(emulator.base, emulator.token, state))
        } finally {
          Fs.rmSync(state, { recursive: true, force: true })
        }
        process.stderr.write(`  ${size} items: run ${run + 1}/${runs} done\n`)
      }
    } finally {
      emulator.child.kill("SIGTERM")
    }
    rows.push({ size, results })
  }
  printTable(rows)
}

const startEmulatorProcess = (files: number) =>
  new Promise<{ child: ChildProcess.ChildProcess; base: string; token: string }>((resolve, reject) => {
    const child = ChildProcess.spawn(
      process.execPath,
      [CLI, "emulator", "--port", "0", "--json", "--library", `files=${files},depth=3`],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    let out = ""
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n")[0]
      if (out.includes("\n") && line !== undefined) {
        const info = JSON.parse(line) as { base_url: string; access_token: string }
        resolve({ child, base: info.base_url, token: info.access_token })
      }
    })
    child.on("exit", (code) => reject(new Error(`emulator exited with ${code}`)))
  })

const runWorker = (base: string, token: string, state: string): WorkerResult => {
  const out = ChildProcess.execFileSync(
    process.execPath,
    [import.meta.filename, "--worker", "--base", base, "--token", token, "--state", state],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 }
  )
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as WorkerResult
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2
}

const spread = (xs: ReadonlyArray<number>, digits = 0): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`

function printTable(rows: ReadonlyArray<{ size: number; results: ReadonlyArray<WorkerResult> }>): void {
  const header = [
    "items",
    "pages",
    "index s",
    "items/s",
    "µs/item",
    "RSS before MB",
    "RSS indexing MB",
    "maxRSS MB",
    "idle reqs",
    "idle CPU ms"
  ]
  const lines = [header]
  for (const { size, results } of rows) {
    lines.push([
      String(size),
      String(results[0]?.pages ?? 0),
      spread(
        results.map((r) => r.indexMs / 1000),
        1
      ),
      spread(results.map((r) => r.items / (r.indexMs / 1000))),
      spread(
        results.map((r) => (r.indexMs * 1000) / r.items),
        1
      ),
      spread(results.map((r) => r.startRssMb)),
      spread(results.map((r) => r.indexRssMb)),
      spread(results.map((r) => r.peakRssMb)),
      spread(results.map((r) => r.idleRequests)),
      spread(
        results.map((r) => r.idleCpuMs),
        1
      )
    ])
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? "").length)))
  for (const line of lines) console.log(line.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  "))
  const perItem = (r: ReadonlyArray<WorkerResult>) => median(r.map((x) => x.indexMs / x.items))
  const first = rows[0]
  const last = rows.at(-1)
  if (first !== undefined && last !== undefined && first !== last) {
    console.log(
      `\nper-item cost ${last.size} vs ${first.size}: ${(perItem(last.results) / perItem(first.results)).toFixed(2)}× (goal ≤ 1.2×)`
    )
  }
  console.log("goals: peak RSS < 150 MB at 100,000 items; idle poll: 1 request, < 50 ms CPU")
  console.log(
    "maxRSS includes loading the TypeScript sources (Node's type stripping); RSS indexing is sampled during the index"
  )
}

if (args.worker) await worker()
else await orchestrate()
