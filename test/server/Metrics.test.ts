import * as Fs from "node:fs"
import * as Os from "node:os"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { RESOLUTION_MS } from "../../src/server/eventLoopLag.ts"
import { Metrics } from "../../src/server/Metrics.ts"
import { parsePrometheusText, sampleValue } from "./promText.ts"

const render = Metrics.use((m) => m.render)
const parsed = Effect.map(render, parsePrometheusText)

// v4 memoizes layers across provides: each test gets its own registry.
const withMetrics = Effect.provide(Layer.fresh(Metrics.layer))

describe("Metrics", () => {
  it.effect("a fresh registry renders valid exposition text with every always-present series at 0", () =>
    Effect.gen(function* () {
      const families = yield* parsed
      assert.strictEqual(families.get("dlsync_transferred_bytes_total")?.type, "counter")
      assert.strictEqual(sampleValue(families, "dlsync_transferred_bytes_total"), 0)
      assert.strictEqual(sampleValue(families, "dlsync_transfer_rate_bytes_per_second"), 0)
      assert.strictEqual(sampleValue(families, "dlsync_transfer_queue_depth"), 0)
      for (const outcome of ["written", "precondition_failed", "failed"]) {
        assert.strictEqual(sampleValue(families, "dlsync_app_state_writes_total", { outcome }), 0)
      }
      // Only known after the first event: no made-up timestamp or lag.
      assert.isFalse(families.has("dlsync_last_sync_success_timestamp_seconds"))
      assert.isFalse(families.has("dlsync_feed_lag_seconds"))
    }).pipe(withMetrics)
  )

  it.effect("records every family the issue asks for, with HELP and TYPE", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* metrics.setFilesByState({ synced: 10, pending: 2, failed: 1 })
      yield* metrics.addBytesTransferred(1000)
      yield* metrics.addBytesTransferred(24)
      yield* metrics.setTransferRate(512.5)
      yield* metrics.setQueueDepth(7)
      yield* metrics.apiRequest("GET /files/changes", 200)
      yield* metrics.apiRequest("GET /files/changes", 200)
      yield* metrics.apiRequest("GET /files/changes", 503)
      yield* metrics.apiRequest("PUT /files/{file}/state", "network")
      yield* metrics.retry("GET /files/changes")
      yield* metrics.retry("download")
      yield* metrics.appStateWrite("written")
      yield* metrics.appStateWrite("precondition_failed")
      yield* metrics.appStateWrite("precondition_failed")
      yield* metrics.appStateWrite("written", 4)
      yield* metrics.appStateWrite("failed", 0)
      yield* TestClock.setTime(1_700_000_000_000)
      yield* metrics.syncSucceeded
      yield* metrics.feedCaughtUp
      yield* TestClock.adjust("90 seconds")

      const families = yield* parsed
      const types: Record<string, string> = {
        dlsync_files: "gauge",
        dlsync_transferred_bytes_total: "counter",
        dlsync_transfer_rate_bytes_per_second: "gauge",
        dlsync_transfer_queue_depth: "gauge",
        dlsync_api_requests_total: "counter",
        dlsync_retries_total: "counter",
        dlsync_api_rate_limit_waits_total: "counter",
        dlsync_api_rate_limit_wait_seconds_total: "counter",
        dlsync_feed_lag_seconds: "gauge",
        dlsync_last_sync_success_timestamp_seconds: "gauge",
        dlsync_app_state_writes_total: "counter",
        dlsync_file_transfers_total: "counter",
        dlsync_held_deletions: "gauge",
        process_resident_memory_bytes: "gauge",
        process_cpu_seconds_total: "counter",
        process_open_fds: "gauge",
        process_max_fds: "gauge",
        process_start_time_seconds: "gauge",
        nodejs_eventloop_lag_p99_seconds: "gauge",
        nodejs_eventloop_lag_max_seconds: "gauge"
      }
      assert.deepStrictEqual([...families.keys()].sort(), Object.keys(types).sort())
      for (const [name, type] of Object.entries(types)) {
        assert.strictEqual(families.get(name)?.type, type, name)
        assert.isTrue((families.get(name)?.help ?? "").length > 0, name)
      }
      assert.strictEqual(sampleValue(families, "dlsync_files", { state: "synced" }), 10)
      assert.strictEqual(sampleValue(families, "dlsync_files", { state: "pending" }), 2)
      assert.strictEqual(sampleValue(families, "dlsync_files", { state: "failed" }), 1)
      assert.strictEqual(sampleValue(families, "dlsync_transferred_bytes_total"), 1024)
      assert.strictEqual(sampleValue(families, "dlsync_transfer_rate_bytes_per_second"), 512.5)
      assert.strictEqual(sampleValue(families, "dlsync_transfer_queue_depth"), 7)
      const requests = (operation: string, status: string) =>
        sampleValue(families, "dlsync_api_requests_total", { operation, status })
      assert.strictEqual(requests("GET /files/changes", "200"), 2)
      assert.strictEqual(requests("GET /files/changes", "503"), 1)
      assert.strictEqual(requests("PUT /files/{file}/state", "network"), 1)
      assert.strictEqual(sampleValue(families, "dlsync_retries_total", { operation: "download" }), 1)
      assert.strictEqual(sampleValue(families, "dlsync_app_state_writes_total", { outcome: "written" }), 5)
      assert.strictEqual(sampleValue(families, "dlsync_app_state_writes_total", { outcome: "precondition_failed" }), 2)
      assert.strictEqual(sampleValue(families, "dlsync_last_sync_success_timestamp_seconds"), 1_700_000_000)
      assert.strictEqual(sampleValue(families, "dlsync_feed_lag_seconds"), 90)
    }).pipe(withMetrics)
  )

  it.effect("the standard process_* families report this process, read at each scrape", () =>
    Effect.gen(function* () {
      const first = yield* parsed
      const rss = sampleValue(first, "process_resident_memory_bytes") ?? 0
      assert.isAbove(rss, 10 * 2 ** 20)
      assert.isBelow(Math.abs(rss - process.memoryUsage.rss()), 64 * 2 ** 20)
      const cpu0 = sampleValue(first, "process_cpu_seconds_total") ?? 0
      assert.isAbove(cpu0, 0)
      const openFds = sampleValue(first, "process_open_fds") ?? 0
      assert.strictEqual(openFds, Fs.readdirSync("/proc/self/fd").length - 1)
      assert.isAtLeast(sampleValue(first, "process_max_fds") ?? 0, openFds)
      assert.closeTo(sampleValue(first, "process_start_time_seconds") ?? 0, performance.timeOrigin / 1000, 1)
      // Spend 30 ms of CPU (however long that takes on a busy machine): the counter grows by
      // what was spent, never resets.
      const spent = () => (process.cpuUsage().user + process.cpuUsage().system) / 1e6
      const until = spent() + 0.03
      while (spent() < until) Math.sqrt(Math.random())
      const cpu1 = sampleValue(yield* parsed, "process_cpu_seconds_total") ?? 0
      assert.isAbove(cpu1, cpu0 + 0.02)
      assert.isBelow(cpu1, process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 + 0.01)
    }).pipe(withMetrics)
  )

  it.live("the event loop's lag since the previous scrape: a loop held for 150 ms shows in its max, once", () =>
    Effect.gen(function* () {
      const lag = Effect.map(parsed, (families) => ({
        p99: sampleValue(families, "nodejs_eventloop_lag_p99_seconds") ?? -1,
        max: sampleValue(families, "nodejs_eventloop_lag_max_seconds") ?? -1
      }))
      // What a synchronous parse of a big body does to every listener and transfer.
      const hold = Effect.sync(() => {
        const until = performance.now() + 150
        while (performance.now() < until) Math.sqrt(Math.random())
      })
      // Lets the monitor's timer fire: libuv runs due timers in due order, and the monitor's
      // is due at most RESOLUTION_MS after the loop time this one is counted from.
      const turn = Effect.sleep(Duration.millis(RESOLUTION_MS + 5))
      yield* lag
      // The first interval of a window only starts it: a hold, a turn, then the hold measured.
      yield* hold
      yield* turn
      yield* hold
      yield* turn
      const held = yield* lag
      assert.isAtLeast(held.max, 0.12)
      assert.isAtMost(held.p99, held.max)
      // Each scrape starts a new window: the hold is not reported twice.
      assert.deepStrictEqual(yield* lag, { p99: 0, max: 0 })
    }).pipe(withMetrics)
  )

  it.effect("pass durations fill a histogram with cumulative buckets, a sum and a count", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* metrics.passFinished(0.3)
      yield* metrics.passFinished(20)
      yield* metrics.passFinished(20_000)
      const families = yield* parsed
      assert.strictEqual(families.get("dlsync_pass_duration_seconds")?.type, "histogram")
      const bucket = (le: string) => sampleValue(families, "dlsync_pass_duration_seconds_bucket", { le })
      assert.strictEqual(bucket("0.1"), 0)
      assert.strictEqual(bucket("0.5"), 1)
      assert.strictEqual(bucket("60"), 2)
      assert.strictEqual(bucket("+Inf"), 3)
      assert.strictEqual(sampleValue(families, "dlsync_pass_duration_seconds_count"), 3)
      assert.strictEqual(sampleValue(families, "dlsync_pass_duration_seconds_sum"), 20_020.3)
    }).pipe(withMetrics)
  )

  it.effect("file transfer outcomes start at 0 and count; held deletions follow the last pass", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const fresh = yield* parsed
      for (const outcome of ["landed", "failed", "paused"]) {
        assert.strictEqual(sampleValue(fresh, "dlsync_file_transfers_total", { outcome }), 0)
      }
      assert.strictEqual(sampleValue(fresh, "dlsync_held_deletions"), 0)
      yield* metrics.fileTransfer("landed")
      yield* metrics.fileTransfer("landed")
      yield* metrics.fileTransfer("failed")
      yield* metrics.setHeldDeletions(120)
      let families = yield* parsed
      assert.strictEqual(sampleValue(families, "dlsync_file_transfers_total", { outcome: "landed" }), 2)
      assert.strictEqual(sampleValue(families, "dlsync_file_transfers_total", { outcome: "failed" }), 1)
      assert.strictEqual(sampleValue(families, "dlsync_file_transfers_total", { outcome: "paused" }), 0)
      assert.strictEqual(sampleValue(families, "dlsync_held_deletions"), 120)
      yield* metrics.setHeldDeletions(0)
      families = yield* parsed
      assert.strictEqual(sampleValue(families, "dlsync_held_deletions"), 0)
    }).pipe(withMetrics)
  )

  it.effect(
    "free space at the root is read at each scrape; absent until the root is known, kept while it cannot be read",
    () =>
      Effect.gen(function* () {
        const metrics = yield* Metrics
        assert.isFalse((yield* parsed).has("dlsync_root_free_bytes"))
        const root = Fs.mkdtempSync(`${Os.tmpdir()}/dlsync-metrics-`)
        yield* metrics.watchRootFreeSpace(root)
        const s = Fs.statfsSync(root)
        const free = sampleValue(yield* parsed, "dlsync_root_free_bytes") ?? 0
        // Other writers share the disk: within 1 GiB of what statfs says now.
        assert.closeTo(free, s.bavail * s.bsize, 2 ** 30)
        assert.isAbove(free, 0)
        Fs.rmSync(root, { recursive: true })
        // The value last read stays rather than turning into a false 0.
        assert.closeTo(sampleValue(yield* parsed, "dlsync_root_free_bytes") ?? 0, free, 2 ** 30)
      }).pipe(withMetrics)
  )

  it.effect("feed lag is measured at scrape time and restarts when the feed catches up", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* metrics.feedCaughtUp
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(sampleValue(yield* parsed, "dlsync_feed_lag_seconds"), 600)
      yield* metrics.feedCaughtUp
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(sampleValue(yield* parsed, "dlsync_feed_lag_seconds"), 2)
    }).pipe(withMetrics)
  )

  it.effect("a file state that disappears drops to 0 rather than keeping its last count", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* metrics.setFilesByState({ synced: 3, failed: 2 })
      yield* metrics.setFilesByState({ synced: 5 })
      const families = yield* parsed
      assert.strictEqual(sampleValue(families, "dlsync_files", { state: "synced" }), 5)
      assert.strictEqual(sampleValue(families, "dlsync_files", { state: "failed" }), 0)
    }).pipe(withMetrics)
  )

  it.effect("rate-limit waits count the held-back requests and the seconds they waited, by operation", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const link = "POST /files/{file}/download-link"
      yield* metrics.rateLimitWait(link, 2_000)
      yield* metrics.rateLimitWait(link, 1_500)
      const families = yield* parsed
      assert.strictEqual(sampleValue(families, "dlsync_api_rate_limit_waits_total", { operation: link }), 2)
      assert.strictEqual(sampleValue(families, "dlsync_api_rate_limit_wait_seconds_total", { operation: link }), 3.5)
    }).pipe(withMetrics)
  )

  it.effect("label values with backslashes, quotes and newlines are escaped and read back intact", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const nasty = 'GET /a\\b "quoted"\nnext line {x="y"}, done'
      yield* metrics.apiRequest(nasty, 404)
      const text = yield* render
      assert.include(text, 'operation="GET /a\\\\b \\"quoted\\"\\nnext line {x=\\"y\\"}, done"')
      const families = parsePrometheusText(text)
      assert.strictEqual(sampleValue(families, "dlsync_api_requests_total", { operation: nasty, status: "404" }), 1)
      // One sample per line: the newline in the value did not split it.
      assert.strictEqual(text.split("\n").filter((line) => line.includes("next line")).length, 1)
    }).pipe(withMetrics)
  )

  it.effect("the retry and rate-limit series of the operations every mirror makes exist from the start, at 0", () =>
    Effect.gen(function* () {
      const families = yield* parsed
      for (const operation of ["GET /files", "GET /files/changes", "POST /files/{file}/download-link"]) {
        assert.strictEqual(sampleValue(families, "dlsync_retries_total", { operation }), 0, operation)
        assert.strictEqual(sampleValue(families, "dlsync_api_rate_limit_waits_total", { operation }), 0, operation)
        assert.strictEqual(sampleValue(families, "dlsync_api_rate_limit_wait_seconds_total", { operation }), 0)
      }
      assert.strictEqual(sampleValue(families, "dlsync_retries_total", { operation: "download" }), 0)
    }).pipe(withMetrics)
  )

  it.effect("each layer build starts from zero", () =>
    Effect.gen(function* () {
      yield* Metrics.use((m) => m.addBytesTransferred(5)).pipe(withMetrics)
      const again = yield* parsed.pipe(withMetrics)
      assert.strictEqual(sampleValue(again, "dlsync_transferred_bytes_total"), 0)
    })
  )
})

describe("the test's exposition reader", () => {
  const refuses = (text: string, why: RegExp) => assert.throws(() => parsePrometheusText(text), why)

  it("refuses what Prometheus would refuse", () => {
    refuses('# HELP a_total x\n# TYPE a_total counter\na_total{l="un"escaped"} 1\n', /expected , or }/)
    refuses('# HELP a x\n# TYPE a gauge\na{l="bad \\t escape"} 1\n', /bad escape/)
    refuses("# HELP a x\n# TYPE a gauge\na 1", /newline/)
    refuses("# HELP a x\n# TYPE a gauge\na one\n", /bad value/)
    refuses("# HELP a x\n# TYPE a gauge\na 1\na 2\n", /duplicate series/)
    refuses('# HELP a x\n# TYPE a gauge\na 1\n# HELP b y\n# TYPE b gauge\nb 1\na{x="1"} 2\n', /not contiguous/)
    refuses("# TYPE a gauge\na 1\n", /no HELP/)
    refuses("# HELP a x\n# TYPE a counter\na 1\n", /_total/)
    refuses("# HELP a x\n# TYPE a gauge\na 1\n# TYPE a gauge\n", /TYPE after samples/)
    const h = "# HELP h x\n# TYPE h histogram\n"
    refuses(`${h}h_bucket{le="1"} 2\nh_bucket{le="2"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n`, /cumulative/)
    refuses(`${h}h_bucket{le="1"} 2\nh_sum 1\nh_count 2\n`, /\+Inf/)
    refuses(`${h}h_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n`, /_count/)
  })
})
