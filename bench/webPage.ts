/**
 * `node bench/webPage.ts [--files 10000] [--tabs 10] [--runs 10]`: the web page's figures,
 * measured from outside against the real daemon (`dlsync run`) and the emulator, with
 * `--files` files mirrored (64 bytes each, 100 folders):
 *
 *   bundle       the page's script and style as served, gzipped (dist/web/assets/*.gz)
 *   /api/status  time to answer (median and range of --runs, after a first) and JSON size
 *   first render the overview in Chromium: from the navigation's start to the overview's
 *                first render with the status document (the page's User Timing mark),
 *                first and median of --runs loads, and when the HTML and the document came
 *   tabs         the daemon's RSS (/proc/<pid>/status) before and after --tabs pages hold
 *                the event stream open, each after the daemon has been idle a while
 *   stalled      a client of the event stream that stops reading (the stream alone on a
 *                socket, test/web/eventStreamServer.ts): what it got before its connection
 *                was closed, against what was sent
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
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
// The assets the page names (a build keeps those of the one before it, for a running daemon).
const index = Fs.readFileSync(Path.join(PAGE_OUT, "index.html"), "utf8")
const assets = [...index.matchAll(/"assets\/([^"]+)"/g)].map(([, name]) => `${name}.gz`)
const gz = (ext: string) =>
  assets
    .filter((f) => f.endsWith(`${ext}.gz`))
    .reduce((n, f) => n + Fs.statSync(Path.join(PAGE_OUT, "assets", f)).size, 0)
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

  const renders: Array<number> = []
  const htmlAt: Array<number> = []
  const statusAt: Array<number> = []
  for (let run = 0; run <= runs; run++) {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(url)
    await page.getByText("Mirror size").waitFor()
    // The page's own mark (web/views/Overview.tsx), ms from the navigation's start.
    renders.push(
      Number(await page.evaluate(`performance.getEntriesByName("dlsync-overview-rendered")[0]?.startTime ?? -1`))
    )
    // Where the time went: the page's HTML and the status document received (ms from navigation).
    const marks = await page.evaluate(
      `[performance.getEntriesByType("navigation")[0]?.responseEnd ?? 0, performance.getEntriesByType("resource").find((e) => e.name.endsWith("/api/status"))?.responseEnd ?? 0]`
    )
    if (run === runs) {
      console.log(
        await page.evaluate(
          `performance.getEntriesByType("resource").map((e) => e.name.replace(location.origin, "") + " " + Math.round(e.startTime) + "–" + Math.round(e.responseEnd)).join("; ")`
        )
      )
    }
    if (Array.isArray(marks)) {
      htmlAt.push(Number(marks[0]))
      statusAt.push(Number(marks[1]))
    }
    await context.close()
  }
  const [firstRender = 0, ...later] = renders
  console.log(
    `first render of the overview: first ${ms(firstRender)}, median ${ms(median(later))} (fresh context each)`
  )
  console.log(
    `  of which: HTML received at ${ms(median(htmlAt))}, the status document at ${ms(median(statusAt))} (medians)`
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
