/**
 * Writes this device's per-file progress into each file's app state, in its own fiber.
 *
 *   report(file, entry) ─► coalesce (pure) ─► outbox (durable) ─► writer fiber
 *                                                                   │ budget (token bucket, 429 halves it)
 *                                                                   ▼
 *                          GET state (unless its ETag is known) ─► merge (pure) ─► PUT If-Match / If-None-Match: *
 *                                   ▲                                                │ 412: forget, re-read, merge again
 *                                   └────────────────────────────────────────────────┘ 404: the file is gone, drop
 *
 * Invariants:
 * - `report` never waits on the network: at most a Ref update and, for a transition, one
 *   outbox insert. Transfers never wait on app-state writes.
 * - Every write is conditional (If-Match with the full quoted ETag, or If-None-Match: *);
 *   other devices' entries and other apps' keys are kept (mergeProgress).
 * - An outbox item leaves the outbox only when written, found unnecessary, or dropped for
 *   good (file gone, value refused); on 429, 5xx, transport failures or missing sign-in
 *   it stays and the writer backs off.
 * - Requests stay within the budget; a 429 pauses for its Retry-After and halves the rate.
 *   The client's own retries are off here, so every 429 reaches the budget.
 * - On shutdown, held progress moves to the outbox (local, no network).
 */
import { Clock, Context, Duration, Effect, Layer, Queue, Random, Ref, Semaphore } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import type { ApiError } from "../api/ApiError.ts"
import { ApiHttpSettings } from "../api/ApiHttp.ts"
import type { Json } from "../api/schemas/common.ts"
import type { FileId } from "../domain/FileId.ts"
import { backoffDelay } from "../pacing/backoff.ts"
import { retrying } from "../pacing/retry.ts"
import { AppStateOutbox, type OutboxItem } from "./AppStateOutbox.ts"
import { type Coalescer, due, emptyCoalescer, nextDueAt, offer } from "./coalesce.ts"
import { mergeProgress } from "./mergeProgress.ts"
import type { ProgressEntry } from "./ProgressEntry.ts"
import { acquire, makeBudget, type RequestBudget, rateLimited } from "./requestBudget.ts"

export const DEFAULT_PROGRESS_INTERVAL_MS = 30_000
export const DEFAULT_MAX_REQUESTS_PER_MINUTE = 300
/** Outbox items taken per pass. */
export const BATCH_SIZE = 50
/** 412s in a row on one file before it waits for the next pass. */
export const MAX_PRECONDITION_RETRIES = 5

/** A write answered 412: read again, merge again. */
const PRECONDITION = "precondition" as const
/** Backoff after 5xx or transport failures (pacing/backoff.ts): the window doubles from first to max. */
export const TRANSIENT_BACKOFF_MS = { first: 5_000, max: 5 * 60_000 } as const
/** Wait while the service refuses the credential (login required, missing scope). */
export const AUTH_BACKOFF_MS = 60_000
/** Longest `drain` waits out backoffs before leaving the rest to the outbox. */
export const DRAIN_MAX_WAIT_MS = 120_000
/** Files whose last known ETag and value are remembered (saves a GET per write). */
export const KNOWN_STATES = 2_000

export interface AppStateWriterOptions {
  /** This device's key under `dlsync` (deviceIdentity.ts). */
  readonly deviceId: string
  /** `app_state.progress_interval`. */
  readonly progressIntervalMs: number
  /** `app_state.max_requests_per_minute`. */
  readonly maxRequestsPerMinute: number
}

export interface WriterStats {
  readonly written: number
  readonly dropped: number
  readonly preconditionFailures: number
  readonly rateLimited: number
  /** The budget's rate now (halved after a 429). */
  readonly ratePerMinute: number
}

export class AppStateWriter extends Context.Service<
  AppStateWriter,
  {
    /** Records a file's progress; returns at once (see invariants). */
    report(fileId: FileId, entry: ProgressEntry): Effect.Effect<void>
    /**
     * Writes everything reported so far, waiting out pauses and backoffs for at most
     * DRAIN_MAX_WAIT_MS in all (what is left stays in the outbox for the next run); true
     * when nothing is left. For `run --once` before exiting, and tests.
     */
    readonly drain: Effect.Effect<boolean>
    /** `drain`, waiting out pauses and backoffs for at most `maxWaitMs` in all. */
    drainWithin(maxWaitMs: number): Effect.Effect<boolean>
    readonly stats: Effect.Effect<WriterStats>
  }
>()("dlsync/appstate/AppStateWriter") {
  /** The writer and its background fiber (stopped with the layer's scope). */
  static readonly layer = (
    options: AppStateWriterOptions
  ): Layer.Layer<AppStateWriter, never, ApiClient | AppStateOutbox> => Layer.effect(AppStateWriter, makeWriter(options))

  /** App state off (API key mode): reports are ignored. */
  static readonly disabled: Layer.Layer<AppStateWriter> = Layer.succeed(
    AppStateWriter,
    AppStateWriter.of({
      report: () => Effect.void,
      drain: Effect.succeed(true),
      drainWithin: () => Effect.succeed(true),
      stats: Effect.succeed({ written: 0, dropped: 0, preconditionFailures: 0, rateLimited: 0, ratePerMinute: 0 })
    })
  )
}

// ---------------------------------------------------------------------------------------

type Outcome =
  | { readonly _tag: "Done"; readonly written: boolean }
  | { readonly _tag: "Later"; readonly afterMs: number }
type Pass = { readonly _tag: "Idle" } | { readonly _tag: "Backoff"; readonly afterMs: number }

interface Known {
  readonly etag: string | undefined
  readonly value: Readonly<Record<string, Json>> | null
}

const makeWriter = Effect.fnUntraced(function* (options: AppStateWriterOptions) {
  const api = yield* ApiClient
  const outbox = yield* AppStateOutbox
  const interval = options.progressIntervalMs
  const coalescer = yield* Ref.make<Coalescer<FileId>>(emptyCoalescer())
  const budget = yield* Ref.make<RequestBudget>(
    makeBudget(options.maxRequestsPerMinute, yield* Clock.currentTimeMillis)
  )
  const counters = yield* Ref.make({ written: 0, dropped: 0, preconditionFailures: 0, rateLimited: 0 })
  const failuresInARow = yield* Ref.make(0)
  const wake = yield* Queue.sliding<void>(1)
  const passLock = yield* Semaphore.make(1)
  const known = new Map<FileId, Known>()

  const remember = (fileId: FileId, state: Known) => {
    known.delete(fileId)
    known.set(fileId, state)
    if (known.size > KNOWN_STATES) known.delete(known.keys().next().value!)
  }

  const count = (key: "written" | "dropped" | "preconditionFailures" | "rateLimited") =>
    Ref.update(counters, (c) => ({ ...c, [key]: c[key] + 1 }))

  /** Waits until the budget allows one more request, and takes it. */
  const spend = Effect.gen(function* () {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const waitMs = yield* Ref.modify(budget, (b) => {
        const r = acquire(b, now, options.maxRequestsPerMinute)
        return [r.waitMs, r.budget]
      })
      if (waitMs === 0) return
      yield* Effect.sleep(Duration.millis(waitMs))
    }
  })

  /** What to do about a failed request. */
  const onFailure = Effect.fnUntraced(function* (error: ApiError, item: OutboxItem) {
    const reason = error.reason
    const log = (message: string) =>
      Effect.logWarning(message).pipe(Effect.annotateLogs({ fileId: item.fileId, error: error.message }))
    switch (reason._tag) {
      case "NotFound":
        yield* count("dropped")
        return { _tag: "Done", written: false } satisfies Outcome
      case "RateLimited": {
        const now = yield* Clock.currentTimeMillis
        const next = yield* Ref.updateAndGet(budget, (b) => rateLimited(b, now, reason.retryAfterMillis))
        yield* count("rateLimited")
        yield* log("app state: rate limited; pausing and halving the request budget")
        return { _tag: "Later", afterMs: next.pausedUntil - now } satisfies Outcome
      }
      case "Unauthorized":
      case "Forbidden":
        yield* log("app state: the service refused the credential; will retry")
        return { _tag: "Later", afterMs: AUTH_BACKOFF_MS } satisfies Outcome
      case "Server":
      case "Transport":
      case "Protocol": {
        const n = yield* Ref.getAndUpdate(failuresInARow, (k) => k + 1)
        yield* log("app state: write failed; will retry")
        const afterMs = backoffDelay(n + 1, yield* Random.next, TRANSIENT_BACKOFF_MS.first, TRANSIENT_BACKOFF_MS.max)
        return { _tag: "Later", afterMs } satisfies Outcome
      }
      default:
        yield* log("app state: the service refused the entry; dropping it")
        yield* count("dropped")
        return { _tag: "Done", written: false } satisfies Outcome
    }
  })

  /** One read-modify-write of a file's state; a 412 (someone wrote since the read) fails with PRECONDITION. */
  const writeOnce = Effect.fnUntraced(function* (item: OutboxItem): Effect.fn.Return<Outcome, typeof PRECONDITION> {
    let current = known.get(item.fileId)
    if (current === undefined) {
      yield* spend
      const read = yield* Effect.result(api.state.get(item.fileId))
      if (read._tag === "Failure") return yield* onFailure(read.failure, item)
      current = { etag: read.success?.etag, value: read.success?.value ?? null }
    }
    const merged = mergeProgress(current.value, options.deviceId, item.entry)
    if (merged._tag === "Unchanged") return { _tag: "Done", written: false }
    if (merged._tag === "TooLarge") {
      yield* Effect.logWarning("app state: the file's state is too large to add this device's entry").pipe(
        Effect.annotateLogs({ fileId: item.fileId, bytes: merged.bytes })
      )
      yield* count("dropped")
      return { _tag: "Done", written: false }
    }
    yield* spend
    const condition = current.etag === undefined ? { ifNoneMatch: "*" as const } : { ifMatch: current.etag }
    const put = yield* Effect.result(api.state.put(item.fileId, merged.value, condition))
    if (put._tag === "Success") {
      remember(item.fileId, { etag: put.success.etag, value: put.success.value })
      yield* Ref.set(failuresInARow, 0)
      yield* count("written")
      return { _tag: "Done", written: true }
    }
    known.delete(item.fileId)
    if (put.failure.reason._tag !== "Precondition") return yield* onFailure(put.failure, item)
    yield* count("preconditionFailures")
    return yield* Effect.fail(PRECONDITION)
  })

  /** Read-modify-write of one file's state, read again and merged again after each 412; later after too many. */
  const writeItem = (item: OutboxItem): Effect.Effect<Outcome> =>
    retrying(writeOnce(item), (_, attempt) => (attempt < MAX_PRECONDITION_RETRIES ? 0 : undefined)).pipe(
      Effect.catch(() => Effect.succeed<Outcome>({ _tag: "Later", afterMs: 1_000 })),
      Effect.updateService(ApiHttpSettings, withoutRetries)
    )

  /** Moves due (or, with `force`, all) held progress into the outbox. */
  const release = Effect.fnUntraced(function* (force: boolean) {
    const now = yield* Clock.currentTimeMillis
    const emit = yield* Ref.modify(coalescer, (t) => {
      const r = due(t, now, interval, force)
      return [r.emit, r.table]
    })
    for (const [fileId, entry] of emit) yield* outbox.enqueue(fileId, entry)
  })

  const pass = Effect.fnUntraced(
    function* (force: boolean): Effect.fn.Return<Pass> {
      yield* release(force)
      for (;;) {
        const items = yield* outbox.take(BATCH_SIZE)
        if (items.length === 0) return { _tag: "Idle" } satisfies Pass
        for (const item of items) {
          const outcome = yield* writeItem(item).pipe(
            Effect.annotateLogs({ fileId: item.fileId }),
            Effect.withSpan("AppStateWriter.write")
          )
          if (outcome._tag === "Later") return { _tag: "Backoff", afterMs: outcome.afterMs } satisfies Pass
          yield* outbox.ack(item)
        }
      }
    },
    (effect) => passLock.withPermit(effect)
  )

  const loop = Effect.gen(function* () {
    for (;;) {
      const result = yield* pass(false)
      if (result._tag === "Backoff") {
        yield* Effect.sleep(Duration.millis(result.afterMs))
        continue
      }
      const dueAt = nextDueAt(yield* Ref.get(coalescer), interval)
      const now = yield* Clock.currentTimeMillis
      yield* dueAt === undefined
        ? Queue.take(wake)
        : Effect.raceFirst(Queue.take(wake), Effect.sleep(Duration.millis(Math.max(0, dueAt - now))))
    }
  })

  yield* Effect.forkScoped(loop)
  yield* Effect.addFinalizer(() => release(true))

  const report = Effect.fn("AppStateWriter.report")(function* (fileId: FileId, entry: ProgressEntry) {
    const now = yield* Clock.currentTimeMillis
    const emit = yield* Ref.modify(coalescer, (t) => {
      const r = offer(t, fileId, entry, now, interval)
      return [r.emit, r.table]
    })
    if (emit !== undefined) yield* outbox.enqueue(fileId, emit)
    yield* Queue.offer(wake, undefined)
  })

  const drainWithin = Effect.fnUntraced(function* (maxWaitMs: number) {
    let waited = 0
    for (;;) {
      const result = yield* pass(true)
      if (result._tag === "Idle") return true
      if (waited + result.afterMs > maxWaitMs) return false
      waited += result.afterMs
      yield* Effect.sleep(Duration.millis(result.afterMs))
    }
  })

  const stats = Effect.gen(function* () {
    const c = yield* Ref.get(counters)
    const b = yield* Ref.get(budget)
    return { ...c, ratePerMinute: b.ratePerMinute }
  })

  return AppStateWriter.of({ report, drain: drainWithin(DRAIN_MAX_WAIT_MS), drainWithin, stats })
})

/** The writer handles 429 and failures itself: one attempt per request. */
const withoutRetries = (s: typeof ApiHttpSettings.Service) => ({
  ...s,
  schedule: { ...s.schedule, maxAttempts: 1 }
})
