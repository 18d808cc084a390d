import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
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
        dlsync_feed_lag_seconds: "gauge",
        dlsync_last_sync_success_timestamp_seconds: "gauge",
        dlsync_app_state_writes_total: "counter"
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
  })
})
