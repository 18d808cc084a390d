/**
 * The indexing benchmark (issue 4 §7):
 *
 *   node bench/index.ts [--runs 3] [--sizes 10000,100000] [--node-flags="…"] [--node-flags-b="…"]
 *
 * The worker (bench/indexWorker.ts) is bundled first with scripts/build.ts, as the CLI
 * ships, into a temporary directory (never the repo) whose node_modules links to the
 * project's, so the external better-sqlite3 resolves. For each size, an emulator with that
 * many files runs in its own process; each run is a fresh worker process (so RSS and CPU
 * are the indexer's alone) that indexes the account from scratch through the change feed
 * (pages of 100, one SQLite transaction each) and then makes one idle poll.
 * The table shows medians (min–max) of the runs and the per-item cost ratio between the
 * largest and smallest size. DLSYNC_BENCH_MEMORY=1 adds the highest heap, external and
 * young-generation sizes seen while indexing (and, with --node-flags=--expose-gc, the heap
 * after a full GC, to tell garbage from a leak). --node-flags passes flags to the workers
 * only (V8 tuning experiments, e.g. --node-flags="--max-semi-space-size=2"). --node-flags-b
 * compares two sets on a shared machine: each run is then a pair, a worker with --node-flags
 * and one with --node-flags-b, alternated against the same emulator, and the table has a row
 * for each set and the B/A ratio of index CPU, pair by pair.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import type { IndexRun } from "./indexWorker.ts"
import { bundleRunner } from "./support/tools.ts"

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    sizes: { type: "string", default: "10000,100000" },
    "node-flags": { type: "string", default: "" },
    "node-flags-b": { type: "string" }
  }
})

const flagsOf = (value: string | undefined): ReadonlyArray<string> => (value ?? "").split(" ").filter((f) => f !== "")
/** The flag sets a run goes through: A alone, or A then B. */
const FLAG_SETS: ReadonlyArray<ReadonlyArray<string>> =
  args["node-flags-b"] === undefined
    ? [flagsOf(args["node-flags"])]
    : [flagsOf(args["node-flags"]), flagsOf(args["node-flags-b"])]

const ROOT = Path.resolve(import.meta.dirname, "..")
const CLI = Path.join(ROOT, "bin/dlsync.js")

async function main(): Promise<void> {
  const runs = Number(args.runs)
  const sizes = (args.sizes ?? "").split(",").map(Number)
  const worker = await bundleWorker()
  const rows: Array<Row> = []
  try {
    for (const size of sizes) rows.push(...(await runSize(worker, size, runs)))
  } finally {
    Fs.rmSync(Path.dirname(worker), { recursive: true, force: true })
  }
  printTable(rows.filter((r) => r.set === 0))
  if (FLAG_SETS.length > 1) {
    console.log(`\nB: --node-flags-b "${FLAG_SETS[1]?.join(" ")}" (A: --node-flags "${FLAG_SETS[0]?.join(" ")}")`)
    printTable(rows.filter((r) => r.set === 1))
    for (const size of sizes) {
      const [a, b] = [0, 1].map((set) => rows.find((r) => r.size === size && r.set === set)?.results ?? [])
      const ratios = (b ?? []).map((r, i) => r.indexCpuMs / (a?.[i]?.indexCpuMs ?? r.indexCpuMs))
      console.log(`${size} items: index CPU B / A, pair by pair: ${spread(ratios, 3)}`)
    }
  }
}

interface Row {
  readonly size: number
  /** Index in FLAG_SETS. */
  readonly set: number
  readonly results: ReadonlyArray<IndexRun>
}

/** Bundles the worker into a fresh temporary directory; returns the bundle's path. */
function bundleWorker(): Promise<string> {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-bench-index-bundle-"))
  return bundleRunner(Path.join(import.meta.dirname, "indexWorker.ts"), dir)
}

async function runSize(worker: string, size: number, runs: number): Promise<Array<Row>> {
  const emulator = await startEmulatorProcess(size)
  const results = FLAG_SETS.map((): Array<IndexRun> => [])
  try {
    for (let run = 0; run < runs; run++) {
      for (const [set, flags] of FLAG_SETS.entries()) {
        const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-bench-index-"))
        try {
          results[set]?.push(runWorker(worker, flags, emulator.base, emulator.token, state))
        } finally {
          Fs.rmSync(state, { recursive: true, force: true })
        }
        const memory = results[set]?.at(-1)?.memory
        process.stderr.write(
          `  ${size} items: run ${run + 1}/${runs}${FLAG_SETS.length > 1 ? ` ${"AB"[set]}` : ""} done${memory === undefined ? "" : ` ${JSON.stringify(memory)}`}\n`
        )
      }
    }
  } finally {
    emulator.child.kill("SIGTERM")
  }
  return results.map((r, set) => ({ size, set, results: r }))
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

const runWorker = (
  worker: string,
  flags: ReadonlyArray<string>,
  base: string,
  token: string,
  state: string
): IndexRun => {
  const out = ChildProcess.execFileSync(
    process.execPath,
    [...flags, worker, "--base", base, "--token", token, "--state", state],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 }
  )
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as IndexRun
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2
}

const spread = (xs: ReadonlyArray<number>, digits = 0): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`

function printTable(rows: ReadonlyArray<Row>): void {
  const header = [
    "items",
    "pages",
    "index s",
    "index CPU s",
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
      spread(
        results.map((r) => r.indexCpuMs / 1000),
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
  const perItem = (r: ReadonlyArray<IndexRun>) => median(r.map((x) => x.indexMs / x.items))
  const first = rows[0]
  const last = rows.at(-1)
  if (first !== undefined && last !== undefined && first !== last) {
    console.log(
      `\nper-item cost ${last.size} vs ${first.size}: ${(perItem(last.results) / perItem(first.results)).toFixed(2)}× (goal ≤ 1.2×)`
    )
  }
  console.log("goals: peak RSS < 150 MB at 100,000 items; idle poll: 1 request, < 50 ms CPU")
  console.log("the worker runs bundled, as the CLI ships; maxRSS includes module loading, RSS indexing is sampled")
}

await main()
