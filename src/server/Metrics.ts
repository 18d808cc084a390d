/**
 * The daemon's metrics, as `/metrics` exposes them in the Prometheus text format (0.0.4).
 *
 * Other parts record through the typed methods below, never through metric names, so
 * the families stay few and documented. Built on Effect's Metric module and rendered by
 * `PrometheusMetrics` (HELP/TYPE lines, label escaping); the registry is private to this
 * service, so `/metrics` shows exactly these families and every layer build starts at 0.
 *
 * Families (all prefixed dlsync_):
 *   files{state}                              gauge    files by state, as the store counts them
 *   transferred_bytes_total                   counter  bytes downloaded into the mirror
 *   transfer_rate_bytes_per_second            gauge    current download rate
 *   transfer_queue_depth                      gauge    transfers waiting to start
 *   api_requests_total{operation,status}      counter  API requests by operation and outcome
 *   retries_total{operation}                  counter  retried attempts (API calls, transfers)
 *   api_rate_limit_waits_total{operation}     counter  API requests held back after a 429 of their group
 *   api_rate_limit_wait_seconds_total{operation} counter  time those requests waited
 *   feed_lag_seconds                          gauge    time since the feed last reached its head
 *   last_sync_success_timestamp_seconds       gauge    Unix time of the last complete pass
 *   app_state_writes_total{outcome}           counter  app-state PUTs: written, precondition_failed (412), failed
 *
 * Label values must have bounded cardinality: `operation` is a route template such as
 * "GET /files/{file}", never a concrete path or id.
 */
import { Clock, Context, Effect, Layer, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"

export type AppStateWriteOutcome = "written" | "precondition_failed" | "failed"

export interface MetricsShape {
  /** Sets the number of files in each state; a state set before and missing now drops to 0. */
  readonly setFilesByState: (counts: Readonly<Record<string, number>>) => Effect.Effect<void>
  readonly addBytesTransferred: (bytes: number) => Effect.Effect<void>
  /** The current download rate; set it to 0 when transfers go idle. */
  readonly setTransferRate: (bytesPerSecond: number) => Effect.Effect<void>
  readonly setQueueDepth: (depth: number) => Effect.Effect<void>
  /** One finished API request: its status code, or "network" when no response came. */
  readonly apiRequest: (operation: string, status: number | "network") => Effect.Effect<void>
  /** One retry (the attempts after the first) of an API operation or a transfer ("download"). */
  readonly retry: (operation: string) => Effect.Effect<void>
  /** One API request waited `millis` at its rate-limit gate (a 429 of its group) before it was sent. */
  readonly rateLimitWait: (operation: string, millis: number) => Effect.Effect<void>
  /** The feed reached its head just now (a poll returned no further page). */
  readonly feedCaughtUp: Effect.Effect<void>
  /** A sync pass completed successfully just now. */
  readonly syncSucceeded: Effect.Effect<void>
  /** Counts `count` (default 1) app-state writes with this outcome. */
  readonly appStateWrite: (outcome: AppStateWriteOutcome, count?: number) => Effect.Effect<void>
  /** The exposition text, with feed lag measured at the moment of the call. */
  readonly render: Effect.Effect<string>
}

export class Metrics extends Context.Service<Metrics, MetricsShape>()("dlsync/server/Metrics") {
  static readonly layer: Layer.Layer<Metrics> = Layer.effect(
    Metrics,
    Effect.suspend(() => makeMetrics)
  )
}

/** The content type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const makeMetrics = Effect.gen(function* () {
  const clock = yield* Clock.Clock
  const registry: Metric.MetricRegistry = new Map()
  const context = Context.make(Metric.MetricRegistry, registry)

  const files = Metric.gauge("dlsync_files", { description: "Files in the mirror by state." })
  const bytes = Metric.counter("dlsync_transferred_bytes_total", {
    description: "Bytes downloaded into the mirror.",
    incremental: true
  })
  const rate = Metric.gauge("dlsync_transfer_rate_bytes_per_second", {
    description: "Current download rate in bytes per second."
  })
  const queue = Metric.gauge("dlsync_transfer_queue_depth", { description: "Transfers waiting to start." })
  const requests = Metric.counter("dlsync_api_requests_total", {
    description: 'API requests by operation and status code ("network" when no response came).',
    incremental: true
  })
  const retries = Metric.counter("dlsync_retries_total", {
    description: "Retried attempts by operation.",
    incremental: true
  })
  const rateLimitWaits = Metric.counter("dlsync_api_rate_limit_waits_total", {
    description: "API requests held back by a rate limit (a 429 of their operation) before being sent.",
    incremental: true
  })
  const rateLimitWaitSeconds = Metric.counter("dlsync_api_rate_limit_wait_seconds_total", {
    description: "Seconds API requests waited for a rate limit (a 429 of their operation) to pass.",
    incremental: true
  })
  const feedLag = Metric.gauge("dlsync_feed_lag_seconds", {
    description: "Seconds since the change feed last reached its head."
  })
  const lastSync = Metric.gauge("dlsync_last_sync_success_timestamp_seconds", {
    description: "Unix time of the last successful sync pass."
  })
  const appState = Metric.counter("dlsync_app_state_writes_total", {
    description: "App-state writes by outcome (precondition_failed = HTTP 412).",
    incremental: true
  })

  // Series that exist from the start, so rate() and alerts see a 0 rather than nothing.
  bytes.updateUnsafe(0, context)
  rate.updateUnsafe(0, context)
  queue.updateUnsafe(0, context)
  for (const outcome of APP_STATE_OUTCOMES) Metric.withAttributes(appState, { outcome }).updateUnsafe(0, context)

  const knownStates = new Set<string>()
  let caughtUpAtMs: number | undefined

  const nowSeconds = () => clock.currentTimeMillisUnsafe() / 1000

  return Metrics.of({
    setFilesByState: (counts) =>
      Effect.sync(() => {
        for (const state of Object.keys(counts)) knownStates.add(state)
        for (const state of knownStates) {
          Metric.withAttributes(files, { state }).updateUnsafe(counts[state] ?? 0, context)
        }
      }),
    addBytesTransferred: (n) => Effect.sync(() => bytes.updateUnsafe(n, context)),
    setTransferRate: (bytesPerSecond) => Effect.sync(() => rate.updateUnsafe(bytesPerSecond, context)),
    setQueueDepth: (depth) => Effect.sync(() => queue.updateUnsafe(depth, context)),
    apiRequest: (operation, status) =>
      Effect.sync(() =>
        Metric.withAttributes(requests, { operation, status: String(status) }).updateUnsafe(1, context)
      ),
    retry: (operation) => Effect.sync(() => Metric.withAttributes(retries, { operation }).updateUnsafe(1, context)),
    rateLimitWait: (operation, millis) =>
      Effect.sync(() => {
        Metric.withAttributes(rateLimitWaits, { operation }).updateUnsafe(1, context)
        Metric.withAttributes(rateLimitWaitSeconds, { operation }).updateUnsafe(millis / 1000, context)
      }),
    feedCaughtUp: Effect.sync(() => {
      caughtUpAtMs = clock.currentTimeMillisUnsafe()
    }),
    syncSucceeded: Effect.sync(() => lastSync.updateUnsafe(nowSeconds(), context)),
    appStateWrite: (outcome, count = 1) =>
      Effect.sync(() => {
        if (count > 0) Metric.withAttributes(appState, { outcome }).updateUnsafe(count, context)
      }),
    render: Effect.sync(() => {
      if (caughtUpAtMs !== undefined) {
        feedLag.updateUnsafe(Math.max(0, clock.currentTimeMillisUnsafe() - caughtUpAtMs) / 1000, context)
      }
      return PrometheusMetrics.formatUnsafe(context)
    })
  })
})

const APP_STATE_OUTCOMES: ReadonlyArray<AppStateWriteOutcome> = ["written", "precondition_failed", "failed"]
