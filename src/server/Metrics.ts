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
 *   pass_duration_seconds                     histogram how long each reconcile pass took
 *   file_transfers_total{outcome}             counter  files whose transfer ended: landed, failed (parked), paused
 *   held_deletions                            gauge    deletions the last pass held back (the big-delete guard)
 *   root_free_bytes                           gauge    free bytes on the mirror root's file system, read at scrape
 *
 * And the standard process_* families every Prometheus client exports (processMetrics.ts),
 * read at scrape: resident memory, CPU seconds, open and max fds, start time; and the event
 * loop's lag since the previous scrape (eventLoopLag.ts), under the names Node's Prometheus
 * client gives it:
 *   nodejs_eventloop_lag_p99_seconds          gauge    99th percentile of how late the loop ran
 *   nodejs_eventloop_lag_max_seconds          gauge    the worst of it (a request that blocked it)
 *
 * Label values must have bounded cardinality: `operation` is a route template such as
 * "GET /files/{file}", never a concrete path or id.
 */
import * as Fs from "node:fs"
import { Clock, Context, Effect, Layer, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { monitorEventLoopLag } from "./eventLoopLag.ts"
import { readProcessMetrics } from "./processMetrics.ts"

export type AppStateWriteOutcome = "written" | "precondition_failed" | "failed"

/** How a file's transfer ended: landed in the mirror, parked as failed, or paused (disk space, rate limit). */
export type FileTransferOutcome = "landed" | "failed" | "paused"

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
  /** One reconcile pass took `seconds`. */
  readonly passFinished: (seconds: number) => Effect.Effect<void>
  /** One file's transfer ended this way. */
  readonly fileTransfer: (outcome: FileTransferOutcome) => Effect.Effect<void>
  /** Deletions the last pass held back (0 when none). */
  readonly setHeldDeletions: (count: number) => Effect.Effect<void>
  /** The mirror root whose file system's free space each scrape reports. */
  readonly watchRootFreeSpace: (root: string) => Effect.Effect<void>
  /** The exposition text, with feed lag, free space and the process figures measured at the moment of the call. */
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

  const passDuration = Metric.histogram("dlsync_pass_duration_seconds", {
    description: "How long each reconcile pass (plan, local actions, downloads) took, in seconds.",
    boundaries: PASS_DURATION_BOUNDARIES
  })
  const fileTransfers = Metric.counter("dlsync_file_transfers_total", {
    description: "Files whose transfer ended, by outcome: landed, failed (parked until a later pass), paused.",
    incremental: true
  })
  const heldDeletions = Metric.gauge("dlsync_held_deletions", {
    description: "Deletions the last pass held back because they exceeded the big-delete limit."
  })
  const rootFree = Metric.gauge("dlsync_root_free_bytes", {
    description: "Free bytes available to dlsync on the mirror root's file system."
  })
  const processMetrics = {
    residentMemory: Metric.gauge("process_resident_memory_bytes", { description: "Resident memory size in bytes." }),
    cpuSeconds: Metric.counter("process_cpu_seconds_total", {
      description: "Total user and system CPU time spent in seconds.",
      incremental: true
    }),
    openFds: Metric.gauge("process_open_fds", { description: "Number of open file descriptors." }),
    maxFds: Metric.gauge("process_max_fds", { description: "Maximum number of open file descriptors." }),
    startTime: Metric.gauge("process_start_time_seconds", {
      description: "Start time of the process since unix epoch in seconds."
    })
  }
  const lagP99 = Metric.gauge("nodejs_eventloop_lag_p99_seconds", {
    description: "99th percentile of how late the event loop ran, since the previous scrape, in seconds."
  })
  const lagMax = Metric.gauge("nodejs_eventloop_lag_max_seconds", {
    description: "The most the event loop ran late since the previous scrape, in seconds."
  })
  const eventLoopLag = yield* monitorEventLoopLag

  // Series that exist from the start, so rate() and alerts see a 0 rather than nothing.
  bytes.updateUnsafe(0, context)
  rate.updateUnsafe(0, context)
  queue.updateUnsafe(0, context)
  for (const outcome of APP_STATE_OUTCOMES) Metric.withAttributes(appState, { outcome }).updateUnsafe(0, context)
  for (const outcome of FILE_TRANSFER_OUTCOMES) {
    Metric.withAttributes(fileTransfers, { outcome }).updateUnsafe(0, context)
  }
  heldDeletions.updateUnsafe(0, context)
  for (const operation of ALWAYS_MADE_OPERATIONS) {
    Metric.withAttributes(retries, { operation }).updateUnsafe(0, context)
    Metric.withAttributes(rateLimitWaits, { operation }).updateUnsafe(0, context)
    Metric.withAttributes(rateLimitWaitSeconds, { operation }).updateUnsafe(0, context)
  }
  Metric.withAttributes(retries, { operation: "download" }).updateUnsafe(0, context)

  const knownStates = new Set<string>()
  let caughtUpAtMs: number | undefined
  let root: string | undefined
  let cpuSecondsSeen = 0

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
    passFinished: (seconds) => Effect.sync(() => passDuration.updateUnsafe(seconds, context)),
    fileTransfer: (outcome) =>
      Effect.sync(() => Metric.withAttributes(fileTransfers, { outcome }).updateUnsafe(1, context)),
    setHeldDeletions: (count) => Effect.sync(() => heldDeletions.updateUnsafe(count, context)),
    watchRootFreeSpace: (path) =>
      Effect.sync(() => {
        root = path
      }),
    render: Effect.sync(() => {
      if (caughtUpAtMs !== undefined) {
        feedLag.updateUnsafe(Math.max(0, clock.currentTimeMillisUnsafe() - caughtUpAtMs) / 1000, context)
      }
      const free = root === undefined ? undefined : freeBytes(root)
      if (free !== undefined) rootFree.updateUnsafe(free, context)
      const proc = readProcessMetrics()
      processMetrics.residentMemory.updateUnsafe(proc.residentMemoryBytes, context)
      // A counter adds: what was spent since the last scrape.
      processMetrics.cpuSeconds.updateUnsafe(proc.cpuSeconds - cpuSecondsSeen, context)
      cpuSecondsSeen = proc.cpuSeconds
      processMetrics.startTime.updateUnsafe(proc.startTimeSeconds, context)
      if (proc.openFds !== undefined) processMetrics.openFds.updateUnsafe(proc.openFds, context)
      if (proc.maxFds !== undefined) processMetrics.maxFds.updateUnsafe(proc.maxFds, context)
      const lag = eventLoopLag.take()
      lagP99.updateUnsafe(lag.p99Seconds, context)
      lagMax.updateUnsafe(lag.maxSeconds, context)
      return PrometheusMetrics.formatUnsafe(context)
    })
  })
})

/** The API operations every mirror makes (listing, change feed, download links): their retry and rate-limit series start at 0. */
const ALWAYS_MADE_OPERATIONS = ["GET /files", "GET /files/changes", "POST /files/{file}/download-link"] as const

const APP_STATE_OUTCOMES: ReadonlyArray<AppStateWriteOutcome> = ["written", "precondition_failed", "failed"]
const FILE_TRANSFER_OUTCOMES: ReadonlyArray<FileTransferOutcome> = ["landed", "failed", "paused"]

/** From a quick no-change poll (well under a second) to a first pass over a large library (hours). */
const PASS_DURATION_BOUNDARIES = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400]

/**
 * Free bytes for an unprivileged writer on `path`'s file system; undefined when it cannot be
 * read (the root unmounted), so the series is left out rather than reported as 0.
 */
const freeBytes = (path: string): number | undefined => {
  try {
    const s = Fs.statfsSync(path)
    return s.bavail * s.bsize
  } catch {
    return undefined
  }
}
