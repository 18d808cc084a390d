/**
 * The segment workers of one attempt: each fetches an open segment nobody works on, else
 * splits the largest one (work stealing), each request on the byte path (leanGet.ts).
 *
 * Every worker holds a permit of its host's connection budget (connectionBudget.ts). A
 * segmented file is split into `segments` pieces and starts with one worker, which takes them
 * in turn on its kept-alive socket; after each measuring window the file's aggregate rate
 * goes to decideConnections.ts, which adds workers (first up to `segments`, then doubling)
 * while the rate keeps growing with them (a CDN capping each connection) and settles when it
 * no longer does, giving the extra back: a worker is given back by cutting its segment where
 * it was received, the rest left open for the workers that stay.
 *
 *   start: one worker ─────────► ramp ─► window: rate ─► decide ─► Add: more workers ─┐
 *                                         ▲   Hold: measure again ◄────────────────────┤
 *                                         └────────────────────────────────────────────┘
 *                                             Settle: give back down to the target, and
 *                                             probe again after 4, 8 … 32 steps
 */
import { Clock, Deferred, Effect, Exit } from "effect"
import { commitDue } from "./commitPolicy.ts"
import { type ConnectionSample, decideConnections } from "./decideConnections.ts"
import type { Validators } from "./judgeResponse.ts"
import { leanGet } from "./leanGet.ts"
import type { FileProgress } from "./ProgressTracker.ts"
import type { RangeGet, RangeOutcome, RangeSink } from "./rangeGet.ts"
import { checkValidators, ifRangeValue } from "./resumeRecords.ts"
import { releaseTail, type Segment, splitLargest, spreadWork, unreceived, unreceivedBytes } from "./segments.ts"
import { fault, type TransferFault } from "./TransferFault.ts"
import type { DownloadLink } from "./TransferLinks.ts"
import type { Deps, FileState, PartialFile } from "./transferState.ts"

export interface WorkPlan {
  readonly link: DownloadLink
  readonly fd: number
  readonly segments: Array<Segment>
  /** Several workers splitting the file (else one request for it all). */
  readonly segmented: boolean
  /** Called with the bytes of each completed write batch (the written mark). */
  readonly onBatch: (written: number) => void
}

/** Fetches every missing byte of `plan.segments` into the partial file. */
export const fetchMissing = (
  deps: Deps,
  file: PartialFile,
  state: FileState,
  fp: FileProgress,
  plan: WorkPlan
): Effect.Effect<void, TransferFault> => {
  const { options } = deps
  const { segments, segmented } = plan
  const host = new URL(plan.link.url).host
  const assigned = new Set<Segment>()
  const next = (): Segment | undefined => {
    const open = segments.find((s) => s.pos < s.end && !assigned.has(s))
    const taken = open ?? (segmented ? splitLargest(segments, options.minSplit) : undefined)
    if (taken !== undefined) assigned.add(taken)
    return taken
  }
  const sink: RangeSink = {
    fd: plan.fd,
    fs: deps.fs,
    limiter: deps.limiter,
    onWritten: (n: number) => {
      fp.done += n
      fp.fetched += n
      state.unsynced += n
      state.toArrive -= n
      if (commitDue(state.unsynced, state.toArrive, options.durabilityBytes)) state.wake?.()
      plan.onBatch(n)
    },
    // At most two batches are ever not durable: the one being committed and the next.
    admit: (resume: () => void) => {
      if (!state.committing || state.unsynced < options.durabilityBytes) return true
      state.writesHeld++
      state.held.push(resume)
      return false
    },
    onValidators: (v: Validators) => checkValidators(state, v)
  }
  /** How many workers may stay (lowered only when giving back); `fp.connections` run now. */
  let keep = Number.POSITIVE_INFINITY
  const worker = Effect.suspend(() => {
    fp.connections++
    return Effect.gen(function* () {
      let segment = next()
      while (segment !== undefined) {
        while (segment.pos < segment.end) {
          const before = segment.pos
          yield* fetchSegment(deps, plan.link, state, file.size, segment, sink)
          if (segment.pos === before && segment.pos < segment.end) {
            return yield* fault("transient", "a response brought no bytes")
          }
        }
        // Given back: the workers that stay take what this one leaves open.
        if (fp.connections > keep) return
        segment = next()
      }
    }).pipe(Effect.ensuring(Effect.sync(() => void fp.connections--)))
  })
  // One request (every file under the segment threshold) runs on this fiber: no fork per file.
  if (!segmented) return deps.connections.withConnection(host, worker)
  spreadWork(segments, options.segments, options.minSplit)
  return Effect.scoped(
    Effect.gen(function* () {
      const finished = yield* Deferred.make<void, TransferFault>()
      let live = 0
      // Started at once: a worker counts its permit (and `live`) before the next try, and one
      // whose file ends in the same tick still runs its finalizers, giving the permit back.
      const launch = (held: Effect.Effect<void, TransferFault>) => {
        live++
        return Effect.forkScoped(
          held.pipe(
            Effect.onExit((exit) => {
              live--
              if (Exit.isFailure(exit)) return Deferred.done(finished, exit)
              return live === 0 ? Deferred.succeed(finished, undefined) : Effect.void
            })
          ),
          { startImmediately: true }
        )
      }
      // The first worker waits for its permit; the ones added later start only with one free.
      yield* launch(deps.connections.withConnection(host, worker))
      /** Cuts the largest segments being fetched where they were received, one per worker to go. */
      const giveBack = (target: number) => {
        keep = target
        let toGo = fp.connections - target
        const busy = segments.filter((s) => assigned.has(s)).sort((a, b) => unreceived(b) - unreceived(a))
        for (const s of busy) {
          if (toGo <= 0) break
          if (releaseTail(segments, s) !== undefined) toGo--
        }
      }
      const adapt = Effect.gen(function* () {
        const stepMs = options.connectionRampMs + options.connectionWindowMs
        let before: ConnectionSample | null = null
        let previous: ConnectionSample | null = null
        let settledSteps = SETTLED_STEPS_FIRST
        yield* Effect.sleep(options.connectionRampMs)
        // Bytes received, counted per socket read: writes come in whole buffers (512 KiB), too
        // coarse for a window of a slow file.
        const received = () => file.size - unreceivedBytes(segments)
        while (true) {
          const from = yield* Clock.currentTimeMillis
          const receivedFrom = received()
          yield* Effect.sleep(options.connectionWindowMs)
          const elapsed = Math.max(1, (yield* Clock.currentTimeMillis) - from)
          const sample = { connections: fp.connections, rate: ((received() - receivedFrom) * 1000) / elapsed }
          const decision = decideConnections({
            ...sample,
            before,
            previous,
            free: deps.connections.free(host),
            remaining: unreceivedBytes(segments),
            minSegment: options.minSplit,
            stepMs,
            firstStep: options.segments
          })
          yield* Effect.logDebug("transfer connections").pipe(
            Effect.annotateLogs({
              connections: sample.connections,
              bytesPerSecond: Math.round(sample.rate),
              decision:
                decision._tag === "Add"
                  ? `add ${decision.count}`
                  : decision._tag === "Settle"
                    ? `settle at ${decision.target}`
                    : "hold"
            })
          )
          // A window without a byte (a handshake still under way, a stall, durability catching
          // up) judges nothing and is no sample for the next: a pending step stays pending.
          if (sample.rate > 0) {
            before = null
            previous = sample
          }
          if (decision._tag === "Settle") {
            giveBack(decision.target)
            // Settled, not for good: one noisy window must not pin a capped file at a few
            // connections, so it probes again later, less often each time.
            yield* Effect.sleep(settledSteps * stepMs)
            settledSteps = Math.min(2 * settledSteps, SETTLED_STEPS_MAX)
            continue
          }
          if (decision._tag === "Hold") continue
          keep = Number.POSITIVE_INFINITY
          for (let i = 0; i < decision.count; i++) {
            const held = deps.connections.tryConnection(host, worker)
            if (held === undefined) break
            yield* launch(held)
            before = sample
          }
          if (before !== null) yield* Effect.sleep(options.connectionRampMs)
        }
      })
      yield* Effect.forkScoped(adapt)
      yield* Deferred.await(finished)
    })
  )
}

/** After settling, a file probes again after this many steps, doubling up to the max. */
const SETTLED_STEPS_FIRST = 4
const SETTLED_STEPS_MAX = 32

/** One segment request, following redirects (bounded, http(s) only, no credentials ever). */
const fetchSegment = Effect.fnUntraced(function* (
  deps: Deps,
  link: DownloadLink,
  state: FileState,
  size: number,
  segment: Segment,
  sink: RangeSink
): Effect.fn.Return<void, TransferFault> {
  let url = new URL(link.url)
  for (let hop = 0; hop <= deps.options.maxRedirects; hop++) {
    const spec = {
      url,
      ranged: !state.noRanges,
      size,
      ifRange: state.validatorsKnown ? ifRangeValue(state) : null,
      idleTimeoutMs: deps.options.idleTimeoutMs,
      userAgent: deps.options.userAgent
    }
    const outcome = yield* runGet(() => leanGet(deps.lean, spec, segment, sink))
    if (outcome._tag === "Done") return
    if (outcome.location.protocol !== "http:" && outcome.location.protocol !== "https:") {
      return yield* fault("fatal", `CDN redirected to a ${outcome.location.protocol} URL`)
    }
    url = outcome.location
  }
  return yield* fault("fatal", `more than ${deps.options.maxRedirects} redirects`)
})

/** One request as an Effect: interruption aborts it and waits until no write is in flight. */
const runGet = (start: () => RangeGet): Effect.Effect<RangeOutcome, TransferFault> =>
  Effect.callback<RangeOutcome, TransferFault>((resume) => {
    const get = start()
    get.promise.then(
      (o) => resume(Effect.succeed(o)),
      (f: TransferFault) => resume(Effect.fail(f))
    )
    return Effect.promise(() => get.cancel())
  })
