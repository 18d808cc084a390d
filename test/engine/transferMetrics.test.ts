/**
 * What the daemon's metrics count from the transfer events: a file's wait for the service's
 * rate limit is a link request held back (both rate-limit families), never a retry.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { countTransferEvent } from "../../src/engine/daemonMetrics.ts"
import { Metrics } from "../../src/server/Metrics.ts"
import { parsePrometheusText, sampleValue } from "../server/promText.ts"

const LINK = { operation: "POST /files/{file}/download-link" }

describe("countTransferEvent", () => {
  it.effect("a rate-limit wait counts one held-back link request and its seconds, and no retry", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const wait = { _tag: "RateLimited", fileId: "f", name: "a.mkv", until: 120_000, delayMs: 120_000 } as const
      yield* countTransferEvent(metrics, wait)
      yield* countTransferEvent(metrics, { ...wait, until: 150_000, delayMs: 30_000 })
      const families = parsePrometheusText(yield* metrics.render)
      assert.strictEqual(sampleValue(families, "dlsync_api_rate_limit_waits_total", LINK), 2)
      assert.strictEqual(sampleValue(families, "dlsync_api_rate_limit_wait_seconds_total", LINK), 150)
      assert.strictEqual(sampleValue(families, "dlsync_retries_total", { operation: "download" }), 0)
    }).pipe(Effect.provide(Layer.fresh(Metrics.layer)))
  )

  it.effect("a landed file counts its bytes and one landed outcome; parked and paused files count their outcome", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const file = { fileId: "f", name: "a.mkv" }
      yield* countTransferEvent(metrics, { _tag: "Finished", ...file, size: 10, fetched: 10, elapsedMs: 5 })
      yield* countTransferEvent(metrics, { _tag: "Parked", ...file, reason: "refused" })
      yield* countTransferEvent(metrics, { _tag: "Paused", ...file, reason: "not enough free space" })
      yield* countTransferEvent(metrics, { _tag: "Started", ...file, size: 10, resumedAt: 0 })
      const families = parsePrometheusText(yield* metrics.render)
      const outcome = (o: string) => sampleValue(families, "dlsync_file_transfers_total", { outcome: o })
      assert.strictEqual(outcome("landed"), 1)
      assert.strictEqual(outcome("failed"), 1)
      assert.strictEqual(outcome("paused"), 1)
      assert.strictEqual(sampleValue(families, "dlsync_transferred_bytes_total"), 10)
    }).pipe(Effect.provide(Layer.fresh(Metrics.layer)))
  )
})
