/**
 * Live progress of the transfers: what each active file has done, its rate and ETA, and
 * the totals, plus a stream of lifecycle events (started, retrying, rate limited, paused,
 * finished, parked) for renderers (progressView.ts on a TTY, progressLog.ts otherwise) and `status`.
 *
 * The byte path only bumps a counter (`FileProgress.done`); rates are computed when a
 * renderer asks for a snapshot, over a sliding window of the samples it took, so
 * progress costs nothing per chunk.
 */
import { Context, Effect, Fiber, Layer, Queue, type Scope } from "effect"

export type TransferEvent =
  | {
      readonly _tag: "Started"
      readonly fileId: string
      readonly name: string
      readonly size: number
      readonly resumedAt: number
    }
  | {
      readonly _tag: "Retrying"
      readonly fileId: string
      readonly name: string
      readonly attempt: number
      readonly delayMs: number
      readonly reason: string
    }
  | {
      /** Waiting for the service's rate limit (not an attempt) until `until` (epoch ms). */
      readonly _tag: "RateLimited"
      readonly fileId: string
      readonly name: string
      readonly until: number
      readonly delayMs: number
    }
  | { readonly _tag: "Paused"; readonly fileId: string; readonly name: string; readonly reason: string }
  | {
      readonly _tag: "Finished"
      readonly fileId: string
      readonly name: string
      readonly size: number
      readonly fetched: number
      readonly elapsedMs: number
    }
  | { readonly _tag: "Parked"; readonly fileId: string; readonly name: string; readonly reason: string }

/** One active transfer's counters, mutated by the engine. */
export interface FileProgress {
  readonly fileId: string
  readonly name: string
  readonly size: number
  /** Bytes of the file present in the partial file (resumed bytes included). */
  done: number
  /** Bytes received over the network in this run. */
  fetched: number
  readonly startedAt: number
  /** Connections fetching the file now (its segment workers holding a permit). */
  connections: number
  /** While the file waits for the service's rate limit: until when (epoch ms); else null. */
  rateLimitedUntil: number | null
}

export interface FileStatus {
  readonly fileId: string
  readonly name: string
  readonly size: number
  readonly done: number
  /** Bytes per second over the recent window. */
  readonly rate: number
  /** Seconds left at the current rate, or null when unknown. */
  readonly eta: number | null
  /** Waiting for the service's rate limit until then (epoch ms); null when not waiting. */
  readonly rateLimitedUntil: number | null
  /** Connections fetching the file now. */
  readonly connections: number
}

export interface ProgressSnapshot {
  readonly at: number
  readonly files: ReadonlyArray<FileStatus>
  readonly overall: {
    readonly active: number
    readonly completed: number
    readonly parked: number
    /** Bytes done and total of the active files plus those finished in this run. */
    readonly done: number
    readonly size: number
    readonly rate: number
    readonly eta: number | null
  }
}

export interface ProgressTrackerShape {
  /** `startedAt`: epoch ms, from the caller's Clock. */
  readonly start: (fileId: string, name: string, size: number, done: number, startedAt: number) => FileProgress
  readonly emit: (event: TransferEvent) => void
  /** Removes the file from the active set and accounts for it as completed or parked. */
  readonly end: (progress: FileProgress, outcome: "completed" | "parked" | "paused") => void
  readonly snapshot: (now: number) => ProgressSnapshot
  /** Registers a listener for lifecycle events; returns the function that removes it. */
  readonly subscribe: (listener: (event: TransferEvent) => void) => () => void
}

export class ProgressTracker extends Context.Service<ProgressTracker, ProgressTrackerShape>()(
  "dlsync/transfer/ProgressTracker"
) {
  static readonly layer = Layer.sync(ProgressTracker, () => ProgressTracker.of(makeProgressTracker()))
}

/**
 * Runs `handle` on every transfer event, in order and one at a time, for the length of
 * the scope; events still queued when the scope closes are handled before it is closed,
 * so a line about a file never comes after what the caller prints next. The tracker's
 * listener only enqueues, so the byte path never waits on it.
 */
export const forEachTransferEvent = <R>(
  handle: (event: TransferEvent) => Effect.Effect<void, never, R>
): Effect.Effect<void, never, ProgressTracker | Scope.Scope | R> =>
  Effect.gen(function* () {
    const progress = yield* ProgressTracker
    const events = yield* Queue.unbounded<TransferEvent>()
    yield* Effect.acquireRelease(
      Effect.sync(() => progress.subscribe((event) => Queue.offerUnsafe(events, event))),
      (unsubscribe) => Effect.sync(unsubscribe)
    )
    const loop = yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(events), handle)))
    yield* Effect.addFinalizer(() =>
      Fiber.interrupt(loop).pipe(
        Effect.andThen(Queue.clear(events)),
        Effect.flatMap((rest) => Effect.forEach(rest, handle, { discard: true }))
      )
    )
  })

/** Rates are measured over this window. */
export const RATE_WINDOW_MS = 5_000

export const makeProgressTracker = (): ProgressTrackerShape => {
  const active = new Map<FileProgress, Array<Sample>>()
  const listeners = new Set<(event: TransferEvent) => void>()
  const overallSamples: Array<Sample> = []
  let completed = 0
  let parked = 0
  let finishedBytes = 0
  let finishedSize = 0
  let fetchedEnded = 0
  return {
    start: (fileId, name, size, done, startedAt) => {
      const p: FileProgress = {
        fileId,
        name,
        size,
        done,
        fetched: 0,
        startedAt,
        connections: 0,
        rateLimitedUntil: null
      }
      active.set(p, [])
      return p
    },
    emit: (event) => {
      for (const l of listeners) l(event)
    },
    end: (p, outcome) => {
      if (!active.delete(p)) return
      fetchedEnded += p.fetched
      if (outcome === "completed") {
        completed++
        finishedBytes += p.size
        finishedSize += p.size
      } else if (outcome === "parked") parked++
    },
    snapshot: (now) => {
      const files: Array<FileStatus> = []
      let done = finishedBytes
      let size = finishedSize
      let fetched = fetchedEnded
      for (const [p, samples] of active) {
        const rate = windowRate(samples, now, p.fetched)
        files.push({
          fileId: p.fileId,
          name: p.name,
          size: p.size,
          done: p.done,
          rate,
          eta: eta(p.size - p.done, rate),
          rateLimitedUntil: p.rateLimitedUntil,
          connections: p.connections
        })
        done += p.done
        size += p.size
        fetched += p.fetched
      }
      const rate = windowRate(overallSamples, now, fetched)
      return {
        at: now,
        files,
        overall: { active: files.length, completed, parked, done, size, rate, eta: eta(size - done, rate) }
      }
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  }
}

// ---------------------------------------------------------------------------------------

interface Sample {
  readonly at: number
  readonly bytes: number
}

/** Records (now, bytes) and returns bytes per second since the oldest sample in the window. */
const windowRate = (samples: Array<Sample>, now: number, bytes: number): number => {
  samples.push({ at: now, bytes })
  while (samples.length > 2 && (samples[0]?.at ?? now) < now - RATE_WINDOW_MS) samples.shift()
  const first = samples[0]
  if (first === undefined || now - first.at < 200) return 0
  return ((bytes - first.bytes) * 1000) / (now - first.at)
}

const eta = (left: number, rate: number): number | null => (rate > 0 ? Math.ceil(left / rate) : null)
