/**
 * `node bench/webPage.ts [--files 10000] [--tabs 10] [--runs 10]`: the web page's figures,
 * measured from outside against the real daemon (`dlsync run`) and the emulator, with
 * `--files` files mirrored (64 bytes each, 100 folders):
 *
 *   bundle       the page's script and style, each gzipped (level 9), and the page as
 *                served (those inline, with the status document), gzipped
 *   /api/status  time to answer (median and range of --runs, after a first) and JSON size
 *   GET /        the page: its first bytes (the fixed part, sent at once) and its last (after
 *                the status document), median and range of --runs after a first
 *   first render the overview in Chromium: from the navigation's start to the overview's
 *                first render with the status document (the page's User Timing mark),
 *                first and median of --runs loads; and, medians, when the page's first byte
 *                came and when it was read to its end (domInteractive)
 *   tabs         the daemon's RSS (/proc/<pid>/status) before and after --tabs pages hold
 *                the event stream open, each after the daemon has been idle a while
 *   stalled      a client of the event stream that stops reading (the stream alone on a
 *                socket, test/web/eventStreamServer.ts): what it got before its connection
 *                was closed, against what was sent
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import * as Zlib from "node:zlib"
import { chromium } from "playwright-core"
import { buildPage, PAGE_OUT, pageIsFresh } from "../scripts/buildPage.ts"
import { eventually, freePort, sandbox } from "../test/integration/harness.ts"
import { stalledClientRun } from "../test/web/eventStreamServer.ts"
import { CHROMIUM } from "../test/web/pageHarness.ts"

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "10000" },
    tabs: { type: "string", default: "10" },
    runs: { type: "string", default: "10" }
  }
})
const files = Number(values.files)
const tabs = Number(values.tabs)
const runs = Number(values.runs)

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const ms = (n: number) => `${n.toFixed(1)} ms`
const settle = (millis: number) => new Promise((r) => setTimeout(r, millis))

if (!pageIsFresh()) await buildPage()
// The assets the page names (a build keeps those of the one before it as well).
const index = Fs.readFileSync(Path.join(PAGE_OUT, "index.html"), "utf8")
const assets = [...index.matchAll(/"assets\/([^"]+)"/g)].map(([, name]) => name ?? "")
const gz = (ext: string) =>
  assets
    .filter((f) => f.endsWith(ext))
    .reduce((n, f) => n + Zlib.gzipSync(Fs.readFileSync(Path.join(PAGE_OUT, "assets", f)), { level: 9 }).length, 0)
console.log(
  `bundle: script ${gz(".js")} B + style ${gz(".css")} B gzipped = ${((gz(".js") + gz(".css")) / 1024).toFixed(1)} KiB`
)

const box = await sandbox()
for (let f = 0; f < 100; f++) {
  const folder = box.emu.control.addFolder({ name: `Folder ${f}`, parentId: null })
  for (let i = f; i < files; i += 100) {
    box.emu.control.addFile({ name: `file-${i}.mkv`, parentId: folder.id, sizeBytes: 64 })
  }
}
const port = await freePort()
const url = `http://127.0.0.1:${port}`
const daemon = box.spawn(["run"], {
  // 16 files at once: the first pass of many tiny files is bound by round trips, not bytes.
  env: {
    DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}`,
    DLSYNC_SYNC_POLL_INTERVAL: "1h",
    DLSYNC_TRANSFERS_CONCURRENCY: "16"
  },
  deadlineMs: 3_600_000
})
const rss = () => {
  const status = Fs.readFileSync(`/proc/${daemon.child.pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] })
try {
  const started = Date.now()
  await eventually(
    async () => {
      const answer = await fetch(`${url}/api/status`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined)
      if (answer?.status !== 200) return false
      const document: unknown = await answer.json()
      const synced =
        typeof document === "object" && document !== null && "entries" in document
          ? Number(Object(document.entries).synced ?? 0)
          : 0
      return synced >= files + 100
    },
    "the first pass",
    1_800_000,
    () => daemon.output().stderr.slice(-2000)
  )
  console.log(`mirrored ${files} files in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const times: Array<number> = []
  let bytes = 0
  for (let run = 0; run <= runs; run++) {
    const t0 = performance.now()
    bytes = (await (await fetch(`${url}/api/status`)).arrayBuffer()).byteLength
    times.push(performance.now() - t0)
  }
  const [cold = 0, ...warm] = times
  console.log(
    `/api/status: first ${ms(cold)}, median ${ms(median(warm))} (${ms(Math.min(...warm))}–${ms(Math.max(...warm))}), ${bytes} B`
  )

  const firstBytes: Array<number> = []
  const lastBytes: Array<number> = []
  let pageBytes = 0
  for (let run = 0; run <= runs; run++) {
    const timing = await pageTiming(url)
    firstBytes.push(timing.firstByte)
    lastBytes.push(timing.lastByte)
    pageBytes = timing.bytes
  }
  console.log(
    `GET /: first byte median ${ms(median(firstBytes.slice(1)))} (${ms(Math.min(...firstBytes.slice(1)))}–${ms(Math.max(...firstBytes.slice(1)))}), ` +
      `last byte median ${ms(median(lastBytes.slice(1)))} (${ms(Math.min(...lastBytes.slice(1)))}–${ms(Math.max(...lastBytes.slice(1)))}), ` +
      `${pageBytes} B gzipped (${(pageBytes / 1024).toFixed(1)} KiB: script, style and status document)`
  )

  const renders: Array<number> = []
  const htmlAt: Array<number> = []
  const parsedAt: Array<number> = []
  for (let run = 0; run <= runs; run++) {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(url)
    await page.getByText("Mirror size").waitFor()
    // The page's own mark (web/views/Overview.tsx), ms from the navigation's start.
    renders.push(
      Number(await page.evaluate(`performance.getEntriesByName("dlsync-overview-rendered")[0]?.startTime ?? -1`))
    )
    // Where the time went: the page's first byte received, and the page read to its end (ms from navigation).
    const marks = await page.evaluate(
      `[performance.getEntriesByType("navigation")[0]?.responseStart ?? 0, performance.getEntriesByType("navigation")[0]?.domInteractive ?? 0]`
    )
    if (run === runs) {
      const requests = await page.evaluate(
        `performance.getEntriesByType("resource").map((e) => e.name.replace(location.origin, "") + " " + Math.round(e.startTime) + "–" + Math.round(e.responseEnd)).join("; ")`
      )
      console.log(`  requests after the page's own (ms from navigation): ${String(requests) || "none"}`)
    }
    if (Array.isArray(marks)) {
      htmlAt.push(Number(marks[0]))
      parsedAt.push(Number(marks[1]))
    }
    await context.close()
  }
  const [firstRender = 0, ...later] = renders
  console.log(
    `first render of the overview: first ${ms(firstRender)}, median ${ms(median(later))} (${ms(Math.min(...later))}–${ms(Math.max(...later))}; fresh context each)`
  )
  console.log(
    `  of which: the page's first byte at ${ms(median(htmlAt))}, the page read to its end at ${ms(median(parsedAt))} (medians)`
  )

  await settle(5000)
  const before = rss()
  // Each tab in a context of its own, as tabs of several browsers and devices: one browser
  // opens six connections to a server at most (HTTP/1.1), and each visible tab holds one.
  const contexts = []
  for (let i = 0; i < tabs; i++) {
    const context = await browser.newContext()
    contexts.push(context)
    const page = await context.newPage()
    await page.goto(url)
    await page.getByText("live", { exact: true }).waitFor()
  }
  await settle(10_000)
  const after = rss()
  console.log(
    `${tabs} tabs open: RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB (+${(after - before).toFixed(1)} MB)`
  )
  for (const context of contexts) await context.close()

  // A client that stops reading: dropped, not buffered for. The daemon's own messages are a
  // few hundred bytes, which a socket's buffers hold by the megabyte; the stream alone, on a
  // socket of its own, with messages of 64 KiB, reaches the bound in moments.
  const run = await stalledClientRun(400, 64 * 1024)
  console.log(
    `stalled event-stream client: ${run.sent} messages (${(run.sentBytes / 1e6).toFixed(1)} MB) sent in ${ms(run.millis)}; ` +
      `the stalled client got ${(run.stalledBytes / 1e6).toFixed(1)} MB, then its connection closed; the reader got ${(run.readerBytes / 1e6).toFixed(1)} MB`
  )
} finally {
  await browser.close()
  daemon.child.kill("SIGTERM")
  await daemon.exit.catch(() => undefined)
  await box.close()
}

/** One GET / as a browser asks it (gzip): when its first and last bytes came (ms), and its size as sent. */
function pageTiming(origin: string): Promise<{ firstByte: number; lastByte: number; bytes: number }> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    Http.get(`${origin}/`, { headers: { "accept-encoding": "gzip" } }, (response) => {
      let firstByte = 0
      let bytes = 0
      response.on("data", (chunk: Buffer) => {
        if (bytes === 0) firstByte = performance.now() - t0
        bytes += chunk.length
      })
      response.on("end", () => resolve({ firstByte, lastByte: performance.now() - t0, bytes }))
      response.on("error", reject)
    }).on("error", reject)
  })
}
