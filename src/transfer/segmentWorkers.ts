/**
 * The segment workers of one attempt: each fetches an open segment nobody works on, else
 * splits the largest one (work stealing), each request on the byte path (leanGet.ts).
 */
import { Effect } from "effect"
import { commitDue } from "./commitPolicy.ts"
import type { Validators } from "./judgeResponse.ts"
import { leanGet, type RangeGet, type RangeOutcome, type RangeSink } from "./leanGet.ts"
import type { FileProgress } from "./ProgressTracker.ts"
import { checkValidators, ifRangeValue } from "./resumeRecords.ts"
import { type Segment, splitLargest, spreadWork } from "./segments.ts"
import { fault, type TransferFault } from "./TransferFault.ts"
import type { DownloadLink } from "./TransferLinks.ts"
import type { Deps, FileState, PartialFile } from "./transferState.ts"

export interface WorkPlan {
  readonly link: DownloadLink
  readonly fd: number
  readonly segments: Array<Segment>
  /** Several workers splitting the file (else one request for it all). */
  readonly segmented: boolean
  /** Called after each write batch (the written mark). */
  readonly onBatch: () => void
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
  const assigned = new Set<Segment>()
  const next = (): Segment | undefined => {
    const open = segments.find((s) => s.pos < s.end && !assigned.has(s))
    const taken = open ?? (segmented ? splitLargest(segments, options.minSplit) : undefined)
    if (taken !== undefined) assigned.add(taken)
    return taken
  }
  if (segmented) spreadWork(segments, options.segments, options.minSplit)
  const workers: Array<Segment> = []
  for (let i = 0; i < (segmented ? options.segments : 1); i++) {
    const s = next()
    if (s !== undefined) workers.push(s)
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
      plan.onBatch()
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
  const worker = (first: Segment) =>
    Effect.gen(function* () {
      let segment: Segment | undefined = first
      while (segment !== undefined) {
        while (segment.pos < segment.end) {
          const before = segment.pos
          yield* fetchSegment(deps, plan.link, state, file.size, segment, sink)
          if (segment.pos === before && segment.pos < segment.end) {
            return yield* fault("transient", "a response brought no bytes")
          }
        }
        segment = next()
      }
    })
  // One worker (every file under the segment threshold) runs on this fiber: no fork per file.
  return workers.length === 1 && workers[0] !== undefined
    ? worker(workers[0])
    : Effect.forEach(workers, worker, { concurrency: "unbounded", discard: true })
}

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
