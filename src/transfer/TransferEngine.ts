/**
 * The transfer engine: brings one remote file to its final path, resumably and verified.
 *
 *   journal.load ─► free space? ─► attempt ──────────────────────────────► finalize
 *                       │            │ link (cached until near expiry)       size check
 *                       │            │ N segment workers ─► leanGet (http) ─► fd  futimes, fsync
 *                       │            │      or rangeGet (undici: https…)     land (localOps: checked
 *                       │            │   └ work stealing: split the largest  rename, fsync(dir))
 *                       │            │                                       journal.remove
 *                       │            │ committer: fdatasync ─► journal.save
 *                       │            ▼
 *                       │         fault ─► link: fresh link · restart: from zero
 *                       │                  transient: backoff · no-space: pause · fatal: park
 *                       │                  rate-limited: wait until the service's time,
 *                       │                  no attempt counted (beyond maxRateLimitWaitMs:
 *                       ▼                  RateLimited, for run --once)
 *                 PausedForSpace
 *
 * Invariants:
 * - Bytes live only in `<root>/.dlsync/partial/<id>` until the file is complete; the final
 *   path is only ever touched by one checked rename of a verified, fsynced file (localOps
 *   `land`: inside the root, real folders, never over anything but what the request
 *   expects there), followed by an fsync of its folder.
 * - A journal record's durable bytes were fdatasynced before the record was saved, and at
 *   most two durability batches are ever written but not durable (writes wait otherwise).
 *   What was written beyond that survives a killed process, not a reboot: the written mark
 *   (writtenMark.ts) lets a restart in the same boot continue from it.
 * - Bytes of two versions are never combined: every response is checked against the
 *   validators (ETag, else Last-Modified) the file's bytes came from, and any doubt
 *   restarts from zero.
 * - The CDN gets no credential: requests carry only Host, Range, If-Range, Accept-Encoding
 *   and User-Agent, on connections of their own, and redirects are followed here.
 * - A file smaller than its segment threshold streams as one request.
 * - When the engine's fiber is interrupted, every request is aborted and every write has
 *   ended before the descriptor is closed.
 */
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { Clock, Context, Duration, Effect, Fiber, Layer, Option, Random, type Scope } from "effect"
import { Agent } from "undici"
import { backoffDelay } from "../pacing/backoff.ts"
import { LocalOpError, land, resolveInRoot } from "../sync/localOps.ts"
import type { LocalStat } from "../sync/model.ts"
import { DLSYNC_DIR } from "../sync/tree.ts"
import { Bandwidth } from "./Bandwidth.ts"
import type { Validators } from "./judgeResponse.ts"
import { LeanPool, leanGet } from "./leanGet.ts"
import { type FileProgress, ProgressTracker } from "./ProgressTracker.ts"
import { rateLimitedUntilText } from "./progressView.ts"
import { type RangeGet, type RangeOutcome, rangeGet } from "./rangeGet.ts"
import {
  allWritten,
  type DurableSegment,
  durableBytes,
  fromDurable,
  planSegments,
  type Segment,
  snapshotSegments,
  splitLargest,
  spreadWork,
  writtenBytes
} from "./segments.ts"
import { fault, faultFromError, type TransferFault } from "./TransferFault.ts"
import { TransferFs, type TransferFsShape } from "./TransferFs.ts"
import { TransferJournal, type TransferRecord } from "./TransferJournal.ts"
import { type DownloadLink, type LinkError, linkUsable, TransferLinks } from "./TransferLinks.ts"
import type { TransferOptions } from "./TransferOptions.ts"
import { encodeMark, markCovers, markPathFor, openMarkWriter, readMark } from "./writtenMark.ts"

export interface TransferRequest {
  readonly fileId: string
  /** `size_bytes` of the remote record: the only size a finished file may have. */
  readonly size: number
  /** Set as the final file's mtime. */
  readonly remoteMtime: Date
  /** The mirror root (absolute); partial data lives under its `.dlsync/partial`. */
  readonly root: string
  /** Where the file lands, relative to the root (`/`-separated); its folder must exist. */
  readonly path: string
  /**
   * What `path` must still hold when the file lands (null: nothing). The landing is the
   * checked rename of the local operations (sync/localOps.ts `land`): it never replaces
   * anything else, and a refusal parks the file with the reason.
   */
  readonly replace: LocalStat | null
  /** For progress and logs; defaults to `path`. */
  readonly name?: string
}

export type TransferResult =
  | {
      readonly _tag: "Completed"
      readonly fileId: string
      /** The request's `path`. */
      readonly path: string
      /** The lstat of the landed file, to be recorded as written. */
      readonly written: LocalStat
      /** Bytes received in this call (less than the size after a resume). */
      readonly fetched: number
      readonly attempts: number
    }
  | { readonly _tag: "Parked"; readonly fileId: string; readonly reason: string; readonly attempts: number }
  | { readonly _tag: "PausedForSpace"; readonly fileId: string; readonly free: number; readonly needed: number }
  | {
      /** The service's rate limit asked for a wait beyond `maxRateLimitWaitMs`: not waited, not failed. */
      readonly _tag: "RateLimited"
      readonly fileId: string
      /** When the service takes link requests again (epoch ms). */
      readonly until: number
      readonly reason: string
    }

export class TransferEngine extends Context.Service<
  TransferEngine,
  {
    /** Never fails: every outcome is a `TransferResult`; only interruption stops it otherwise. */
    readonly download: (request: TransferRequest) => Effect.Effect<TransferResult>
  }
>()("dlsync/transfer/TransferEngine") {
  static readonly layer = (options: TransferOptions) =>
    Layer.effect(
      TransferEngine,
      Effect.gen(function* () {
        const fs = yield* TransferFs
        const deps: Deps = {
          options,
          journal: yield* TransferJournal,
          fs,
          links: yield* TransferLinks,
          limiter: yield* Bandwidth,
          progress: yield* ProgressTracker,
          dispatcher: yield* Effect.acquireRelease(
            Effect.sync(
              () =>
                new Agent({
                  keepAliveTimeout: 15_000,
                  connections: Math.max(8, options.segments * 2),
                  pipelining: 1
                })
            ),
            (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
          ),
          lean: yield* Effect.acquireRelease(
            Effect.sync(() => new LeanPool(options.bufferSize)),
            (pool) => Effect.sync(() => pool.close())
          ),
          linkCache: new Map(),
          undiciOrigins: new Set(),
          knownDirs: new Set(),
          freeCache: new Map()
        }
        return TransferEngine.of({ download: (request) => download(deps, request) })
      })
    )
}

/** The partial file's path relative to the root: ids that are safe names are kept, others hashed. */
export const partialPathFor = (fileId: string): string =>
  NodePath.join(
    ".dlsync",
    "partial",
    SAFE_NAME.test(fileId) && !RESERVED_NAMES.has(fileId) ? fileId : `x-${hexOf(fileId)}`
  )

// ---------------------------------------------------------------------------------------

const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/
/** Names taken in the partial folder by others (the staging folder of earlier versions, until removed). */
const RESERVED_NAMES = new Set(["landing"])

interface Deps {
  readonly options: TransferOptions
  readonly journal: TransferJournal["Service"]
  readonly fs: TransferFsShape
  readonly links: TransferLinks["Service"]
  readonly limiter: Bandwidth["Service"]
  readonly progress: ProgressTracker["Service"]
  readonly dispatcher: Agent
  readonly lean: LeanPool
  readonly linkCache: Map<string, { readonly link: DownloadLink; readonly obtainedAt: number }>
  /** Origins whose responses the lean reader handed back (chunked…): undici from then on. */
  readonly undiciOrigins: Set<string>
  /** Partial directories known to exist. */
  readonly knownDirs: Set<string>
  /** The last statfs per root, reused for `FREE_SPACE_TTL_MS`. */
  readonly freeCache: Map<string, { readonly at: number; readonly free: number }>
}

/** How long a free-space reading is trusted when starting files. */
const FREE_SPACE_TTL_MS = 1_000

/** Free bytes on the root's file system: a reading under a second old unless `fresh`. */
const freeSpace = (deps: Deps, root: string, fresh: boolean): Effect.Effect<number, TransferFault> =>
  Effect.suspend(() => {
    const now = Date.now()
    const cached = deps.freeCache.get(root)
    if (!fresh && cached !== undefined && now - cached.at < FREE_SPACE_TTL_MS) return Effect.succeed(cached.free)
    return io("statfs", () => deps.fs.freeBytes(root)).pipe(
      Effect.tap((free) => Effect.sync(() => deps.freeCache.set(root, { at: now, free })))
    )
  })

/** What one call knows about the file's partial data. */
interface FileState {
  /** null: plan afresh at the next attempt (nothing of this version written). */
  segments: Array<Segment> | null
  /** What the journal holds as durable (the last commit). */
  durable: ReadonlyArray<DurableSegment>
  etag: string | null
  lastModified: string | null
  /** The validators above belong to the bytes written (learned from a response or the journal). */
  validatorsKnown: boolean
  noRanges: boolean
  attempts: number
  lastError: string | null
  /** A record for the file exists in the journal. */
  journaled: boolean
  /** Bytes written since the last fdatasync. */
  unsynced: number
  partialDirSynced: boolean
  /** Wakes the committer when `unsynced` crosses the batch size. */
  wake: (() => void) | null
  /** A commit (fdatasync + journal save) is running. */
  committing: boolean
  /** Writes held while a commit runs and another batch is already written. */
  held: Array<() => void>
}

const download = (deps: Deps, request: TransferRequest): Effect.Effect<TransferResult> => {
  let active: FileProgress | undefined
  return Effect.gen(function* () {
    const { options, progress } = deps
    const name = request.name ?? request.path
    const inside = yield* Effect.result(Effect.try(() => resolveInRoot(request.root, request.path)))
    if (inside._tag === "Failure" || request.path.split("/")[0] === DLSYNC_DIR) {
      return parked(request.fileId, `final path ${request.path} is not inside the mirror root`, 0)
    }
    const partialRel = partialPathFor(request.fileId)
    const partialAbs = NodePath.join(request.root, partialRel)
    const state = yield* loadState(deps, request, partialRel, partialAbs)
    const fp = progress.start(request.fileId, name, request.size, writtenBytes(state.segments ?? []))
    active = fp
    progress.emit({ _tag: "Started", fileId: request.fileId, name, size: request.size, resumedAt: fp.done })

    let failures = 0
    let rateLimitWaits = 0
    let linkRefreshes = 0
    let restarts = 0
    const park = Effect.fnUntraced(function* (reason: string) {
      state.lastError = reason
      yield* saveRecord(deps, request, partialRel, state)
      progress.emit({ _tag: "Parked", fileId: request.fileId, name, reason })
      progress.end(fp, "parked")
      return parked(request.fileId, reason, state.attempts)
    })

    while (true) {
      const stillNeeded = request.size - writtenBytes(state.segments ?? [])
      let free = yield* Effect.result(freeSpace(deps, request.root, false))
      if (free._tag === "Success" && free.success - stillNeeded < options.min_free_space) {
        free = yield* Effect.result(freeSpace(deps, request.root, true))
      }
      if (free._tag === "Failure") return yield* park(free.failure.message)
      if (free.success - stillNeeded < options.min_free_space) {
        progress.emit({ _tag: "Paused", fileId: request.fileId, name, reason: "not enough free space" })
        progress.end(fp, "paused")
        return pausedForSpace(request.fileId, free.success, stillNeeded + options.min_free_space)
      }

      const outcome = yield* Effect.result(attempt(deps, request, partialAbs, partialRel, state, fp))
      if (outcome._tag === "Success") {
        const landed = outcome.success
        if (landed instanceof LocalOpError) {
          // The verified file may not go where it was meant to (something appeared there, a
          // folder became a symlink…): dropped, as the next pass plans that path afresh.
          progress.emit({ _tag: "Parked", fileId: request.fileId, name, reason: landed.message })
          progress.end(fp, "parked")
          return parked(request.fileId, landed.message, state.attempts + 1)
        }
        progress.emit({
          _tag: "Finished",
          fileId: request.fileId,
          name,
          size: request.size,
          fetched: fp.fetched,
          elapsedMs: Date.now() - fp.startedAt
        })
        progress.end(fp, "completed")
        return {
          _tag: "Completed",
          fileId: request.fileId,
          path: request.path,
          written: landed,
          fetched: fp.fetched,
          attempts: state.attempts + 1
        } satisfies TransferResult
      }
      const fault = outcome.failure
      if (fault.kind === "rate-limited") {
        // The account's rate limit, not this file's fault: waited out, never an attempt.
        const delayMs =
          fault.retryAfterMillis ??
          backoffDelay(++rateLimitWaits, yield* Random.next, options.backoffBaseMs, options.backoffMaxMs)
        const until = (yield* Clock.currentTimeMillis) + delayMs
        if (options.maxRateLimitWaitMs !== null && delayMs > options.maxRateLimitWaitMs) {
          const reason = `the service's rate limit holds download links until ${rateLimitedUntilText(until)}`
          progress.emit({ _tag: "Paused", fileId: request.fileId, name, reason })
          progress.end(fp, "paused")
          return { _tag: "RateLimited", fileId: request.fileId, until, reason } satisfies TransferResult
        }
        yield* Effect.logDebug("transfer waits for the service's rate limit").pipe(
          Effect.annotateLogs({ fileId: request.fileId, waitMillis: delayMs })
        )
        progress.emit({ _tag: "RateLimited", fileId: request.fileId, name, until, delayMs })
        fp.rateLimitedUntil = until
        yield* Effect.sleep(Duration.millis(delayMs))
        fp.rateLimitedUntil = null
        continue
      }
      state.attempts++
      state.lastError = fault.message
      yield* Effect.logDebug("transfer attempt failed").pipe(
        Effect.annotateLogs({ fileId: request.fileId, kind: fault.kind, reason: fault.message })
      )
      switch (fault.kind) {
        case "fatal":
          return yield* park(fault.message)
        case "no-space": {
          yield* saveRecord(deps, request, partialRel, state)
          progress.emit({ _tag: "Paused", fileId: request.fileId, name, reason: fault.message })
          progress.end(fp, "paused")
          const free = yield* Effect.orElseSucceed(
            io("statfs", () => deps.fs.freeBytes(request.root)),
            () => 0
          )
          return pausedForSpace(
            request.fileId,
            free,
            request.size - writtenBytes(state.segments ?? []) + options.min_free_space
          )
        }
        case "link":
          deps.linkCache.delete(request.fileId)
          if (++linkRefreshes > options.maxLinkRefreshes) {
            return yield* park(`${fault.message} after ${options.maxLinkRefreshes} fresh links`)
          }
          break
        case "restart":
          if (++restarts > options.maxRestarts) return yield* park(`${fault.message} (restarted ${restarts - 1} times)`)
          // The mark describes bytes of the old version: gone before anything new is written.
          yield* Effect.ignore(io("unlink", () => deps.fs.unlink(markPathFor(partialAbs))))
          resetToZero(state, fault.noRanges)
          fp.done = 0
          yield* saveRecord(deps, request, partialRel, state)
          break
        case "transient": {
          if (++failures >= options.maxAttempts) return yield* park(`${fault.message} (${failures} attempts)`)
          const delayMs = backoffDelay(failures, yield* Random.next, options.backoffBaseMs, options.backoffMaxMs)
          progress.emit({
            _tag: "Retrying",
            fileId: request.fileId,
            name,
            attempt: state.attempts,
            delayMs,
            reason: fault.message
          })
          yield* saveRecord(deps, request, partialRel, state)
          yield* Effect.sleep(delayMs)
          break
        }
      }
    }
  }).pipe(
    Effect.onInterrupt(() => Effect.sync(() => active !== undefined && deps.progress.end(active, "paused"))),
    Effect.annotateLogs({ fileId: request.fileId }),
    Effect.withSpan("TransferEngine.download", { attributes: { fileId: request.fileId, size: request.size } })
  )
}

/**
 * One attempt: open, fetch every missing byte, and on success land the file. Returns the
 * landed file's lstat, or the landing's refusal (the verified partial data is then dropped).
 */
const attempt = Effect.fnUntraced(function* (
  deps: Deps,
  request: TransferRequest,
  partialAbs: string,
  partialRel: string,
  state: FileState,
  fp: FileProgress
): Effect.fn.Return<LocalStat | LocalOpError, TransferFault, Scope.Scope> {
  const { options, fs } = deps
  const partialDir = NodePath.dirname(partialAbs)
  if (!deps.knownDirs.has(partialDir)) {
    yield* io("mkdir", () => fs.mkdirp(partialDir))
    deps.knownDirs.add(partialDir)
  }
  // A file of one write batch or less is never resumed (nothing of it is committed on the
  // way): it starts from an empty partial, is written in one piece and needs no
  // preallocation or size check — two system calls fewer per small file.
  const small = request.size <= options.bufferSize
  const file = yield* Effect.acquireRelease(
    io("open", () => fs.openPartial(partialAbs, small)).pipe(Effect.map((fd) => ({ fd, open: true }))),
    (f) => (f.open ? Effect.promise(() => fs.close(f.fd).catch(() => undefined)) : Effect.void)
  )
  if (small) state.segments = null
  // Preallocated (sparse) for positional writes; a no-op when resuming.
  else yield* io("preallocate", () => fs.ftruncate(file.fd, request.size))
  const segmented = !state.noRanges && options.segments > 1 && request.size >= Math.max(1, options.segment_threshold)
  if (state.segments === null || (state.noRanges && writtenBytes(state.segments) > 0)) {
    fp.done = 0
    state.segments = segmented
      ? planSegments(request.size, options.segments, options.minSplit)
      : [{ start: 0, end: request.size, pos: 0, recv: 0 }]
  }
  const segments = state.segments

  if (!allWritten(segments)) {
    const link = yield* linkFor(deps, request.fileId)
    const committer = small
      ? undefined
      : yield* Effect.forkScoped(commitLoop(deps, request, partialRel, state, file.fd))
    const mark = small || options.bootId === null ? undefined : yield* markWriter(deps, request, partialAbs, state)
    // Each worker takes an open segment nobody works on, else splits the largest one.
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
    const sink = {
      fd: file.fd,
      fs,
      batchBytes: options.bufferSize,
      limiter: deps.limiter,
      onWritten: (n: number) => {
        fp.done += n
        fp.fetched += n
        state.unsynced += n
        if (state.unsynced >= options.durabilityBytes) state.wake?.()
        mark?.update()
      },
      // At most two batches are ever not durable: the one being committed and the next.
      admit: (resume: () => void) => {
        if (!state.committing || state.unsynced < options.durabilityBytes) return true
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
            yield* fetchSegment(deps, link, state, request.size, segment, sink)
            if (segment.pos === before && segment.pos < segment.end) {
              return yield* fault("transient", "a response brought no bytes")
            }
          }
          segment = next()
        }
      })
    // One worker (every file under the segment threshold) runs on this fiber: no fork per file.
    const work =
      workers.length === 1 && workers[0] !== undefined
        ? worker(workers[0])
        : Effect.forEach(workers, worker, { concurrency: "unbounded", discard: true })
    const result = yield* Effect.result(work)
    if (committer !== undefined) yield* Fiber.interrupt(committer)
    if (mark !== undefined) yield* Effect.promise(() => mark.close())
    if (result._tag === "Failure") {
      // Keep what was written: make it durable so a later run resumes from it.
      if (result.failure.kind !== "restart") {
        yield* Effect.ignore(commit(deps, request, partialRel, state, file.fd))
      }
      return yield* result.failure
    }
  }

  // Finalize: verified size, mtime, fsync, close, checked rename into place, fsync of its folder.
  if (!allWritten(segments) || writtenBytes(segments) !== request.size) {
    return yield* fault("fatal", "internal: finished with bytes missing")
  }
  const actual = small ? request.size : yield* io("fstat", () => fs.fsize(file.fd))
  if (actual !== request.size) {
    return yield* fault("restart", `partial file has ${actual} bytes, expected ${request.size}`)
  }
  yield* io("futimes", () => fs.setMtime(file.fd, request.remoteMtime))
  yield* io("fsync", () => fs.fsync(file.fd))
  file.open = false
  yield* io("close", () => fs.close(file.fd))
  const landed = yield* Effect.result(land(request.root, partialAbs, request.path, request.replace))
  if (landed._tag === "Failure" && landed.failure.reason === "io") {
    return yield* fault("transient", `landing: ${landed.failure.message}`)
  }
  if (landed._tag === "Failure") yield* Effect.ignore(io("unlink", () => fs.unlink(partialAbs)))
  if (!small) yield* Effect.ignore(io("unlink", () => fs.unlink(markPathFor(partialAbs))))
  deps.linkCache.delete(request.fileId)
  if (state.journaled) {
    yield* deps.journal.remove(request.fileId)
    state.journaled = false
  }
  return landed._tag === "Success" ? landed.success : landed.failure
}, Effect.scoped)

/** One segment request, following redirects (bounded, http(s) only, no credentials ever). */
const fetchSegment = Effect.fnUntraced(function* (
  deps: Deps,
  link: DownloadLink,
  state: FileState,
  size: number,
  segment: Segment,
  sink: Parameters<typeof rangeGet>[3]
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
    // Plain-HTTP links take the lean reader; https, and origins whose responses it could
    // not read (remembered), take undici.
    const lean = deps.options.leanReader && url.protocol === "http:" && !deps.undiciOrigins.has(url.origin)
    let outcome = yield* runGet(
      lean ? () => leanGet(deps.lean, spec, segment, sink) : () => rangeGet(deps.dispatcher, spec, segment, sink)
    )
    if (outcome._tag === "Fallback") {
      deps.undiciOrigins.add(url.origin)
      outcome = yield* runGet(() => rangeGet(deps.dispatcher, spec, segment, sink))
    }
    if (outcome._tag === "Done") return
    if (outcome._tag === "Fallback") return yield* fault("fatal", "internal: undici asked for a fallback")
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

/** The transfer's written mark, kept current after each write batch and closed with the attempt. */
const markWriter = (deps: Deps, request: TransferRequest, partialAbs: string, state: FileState) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      openMarkWriter(deps.fs, markPathFor(partialAbs), () =>
        // Unknown validators would let a mark outlive a version change: no mark then.
        state.segments === null || !state.validatorsKnown || deps.options.bootId === null
          ? undefined
          : encodeMark(deps.options.bootId, {
              size: request.size,
              etag: state.etag,
              lastModified: state.lastModified,
              segments: state.segments
            })
      ).catch(() => undefined)
    ),
    (writer) => Effect.promise(() => writer?.close() ?? Promise.resolve())
  )

/** Batches durability: wakes on `durabilityBytes` written or `durabilityMs` elapsed, then commits. */
const commitLoop = (
  deps: Deps,
  request: TransferRequest,
  partialRel: string,
  state: FileState,
  fd: number
): Effect.Effect<void, never> =>
  Effect.forever(
    Effect.callback<void>((resume) => {
      if (state.unsynced >= deps.options.durabilityBytes) return resume(Effect.void)
      const timer = setTimeout(() => resume(Effect.void), deps.options.durabilityMs)
      state.wake = () => {
        state.wake = null
        resume(Effect.void)
      }
      return Effect.sync(() => {
        clearTimeout(timer)
        state.wake = null
      })
    }).pipe(
      Effect.andThen(Effect.sync(() => clearWake(state))),
      Effect.andThen(Effect.ignore(commit(deps, request, partialRel, state, fd)))
    )
  )

/** fdatasync, then save the positions written before it started. Uninterruptible. */
const commit = (
  deps: Deps,
  request: TransferRequest,
  partialRel: string,
  state: FileState,
  fd: number
): Effect.Effect<void, TransferFault> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      if (state.unsynced === 0 || state.segments === null) return
      const snapshot = snapshotSegments(state.segments)
      state.unsynced = 0
      state.committing = true
      if (!state.partialDirSynced) {
        yield* io("fsync dir", () => deps.fs.fsyncDir(NodePath.dirname(NodePath.join(request.root, partialRel))))
        state.partialDirSynced = true
      }
      yield* Effect.callback<void, TransferFault>((resume) => {
        deps.fs.fdatasync(fd, (e) => resume(e === null ? Effect.void : Effect.fail(faultFromError(e, "fdatasync"))))
      })
      state.durable = snapshot
      yield* deps.journal.save(record(request, partialRel, state))
      state.journaled = true
    }).pipe(Effect.ensuring(Effect.sync(() => releaseHeld(state))))
  )

const releaseHeld = (state: FileState): void => {
  state.committing = false
  for (const resume of state.held.splice(0)) resume()
}

const loadState = Effect.fnUntraced(function* (
  deps: Deps,
  request: TransferRequest,
  partialRel: string,
  partialAbs: string
): Effect.fn.Return<FileState> {
  const loaded = yield* deps.journal.load(request.fileId)
  const state: FileState = {
    segments: null,
    durable: [],
    etag: null,
    lastModified: null,
    validatorsKnown: false,
    noRanges: false,
    attempts: 0,
    lastError: null,
    journaled: Option.isSome(loaded),
    unsynced: 0,
    partialDirSynced: false,
    wake: null,
    committing: false,
    held: []
  }
  const r = Option.getOrUndefined(loaded)
  if (r !== undefined) {
    state.attempts = r.attempts
    state.lastError = r.lastError
  }
  // Without a record only a mark can resume, and a file of one write batch or less has none.
  if (r === undefined && (deps.options.bootId === null || request.size <= deps.options.bufferSize)) return state
  const onDisk = yield* Effect.orElseSucceed(
    io("stat", () => deps.fs.size(partialAbs)),
    () => undefined
  )
  if (onDisk !== request.size) return state
  // Bytes a killed process wrote after its last commit are still in this boot's page cache.
  const markText = yield* Effect.orElseSucceed(
    io("read mark", () => deps.fs.readHead(markPathFor(partialAbs), MARK_MAX_BYTES)),
    () => undefined
  )
  const marked = markText === undefined ? undefined : readMark(markText, deps.options.bootId, request.size)
  if (r === undefined) {
    // Killed before its first commit: nothing is durable, but the mark holds what it wrote.
    if (marked === undefined) return state
    state.segments = marked.segments
    state.etag = marked.etag
    state.lastModified = marked.lastModified
    state.validatorsKnown = true
    return state
  }
  const segments = fromDurable(r.segments, request.size)
  if (r.size !== request.size || r.partialPath !== partialRel || segments === undefined) return state
  const fromMark = marked !== undefined && markCovers(marked, r) ? marked.segments : undefined
  state.segments = fromMark ?? (durableBytes(r.segments) > 0 ? segments : null)
  state.durable = state.segments === null ? [] : r.segments
  state.etag = r.etag
  state.lastModified = r.lastModified
  state.validatorsKnown = state.segments !== null
  state.partialDirSynced = true
  return state
})

/** A mark is one line; one this long is not one dlsync wrote. */
const MARK_MAX_BYTES = 64 * 1024

const saveRecord = (deps: Deps, request: TransferRequest, partialRel: string, state: FileState): Effect.Effect<void> =>
  // Only bytes committed by `commit` are claimed durable, never positions written since.
  deps.journal.save(record(request, partialRel, state)).pipe(
    Effect.tap(() =>
      Effect.sync(() => {
        state.journaled = true
      })
    )
  )

const record = (request: TransferRequest, partialRel: string, state: FileState): TransferRecord => ({
  fileId: request.fileId,
  size: request.size,
  etag: state.etag,
  lastModified: state.lastModified,
  partialPath: partialRel,
  segments: state.durable,
  attempts: state.attempts,
  lastError: state.lastError
})

/** Learns the validators from the first response of a version; later ones must agree. */
const checkValidators = (state: FileState, v: Validators): TransferFault | undefined => {
  if (!state.validatorsKnown) {
    state.etag = v.etag
    state.lastModified = v.lastModified
    state.validatorsKnown = true
    return undefined
  }
  if (state.etag !== null) {
    return v.etag !== null && v.etag !== state.etag
      ? fault("restart", `ETag changed from ${state.etag} to ${v.etag}`)
      : undefined
  }
  if (state.lastModified !== null && v.lastModified !== null && v.lastModified !== state.lastModified) {
    return fault("restart", `Last-Modified changed from ${state.lastModified} to ${v.lastModified}`)
  }
  if (state.lastModified === null && v.etag !== null) {
    return fault("restart", "the CDN now sends an ETag the partial data was not checked against")
  }
  return undefined
}

/** If-Range takes a strong ETag, else Last-Modified (a weak ETag cannot be used). */
const ifRangeValue = (state: FileState): string | null =>
  state.etag !== null && !state.etag.startsWith("W/") ? state.etag : state.lastModified

const resetToZero = (state: FileState, noRanges: boolean): void => {
  state.segments = null
  state.durable = []
  state.etag = null
  state.lastModified = null
  state.validatorsKnown = false
  state.noRanges = state.noRanges || noRanges
  state.unsynced = 0
}

const linkFor = Effect.fnUntraced(function* (
  deps: Deps,
  fileId: string
): Effect.fn.Return<DownloadLink, TransferFault> {
  const now = Date.now()
  const cached = deps.linkCache.get(fileId)
  if (cached !== undefined && linkUsable(cached.link, cached.obtainedAt, now, deps.options.linkMarginMs)) {
    return cached.link
  }
  const link = yield* deps.links.getLink(fileId).pipe(Effect.mapError(linkFault))
  if (!URL.canParse(link.url)) return yield* fault("fatal", "the service gave an invalid link")
  deps.linkCache.set(fileId, { link, obtainedAt: Date.now() })
  return link
})

const linkFault = (e: LinkError): TransferFault =>
  e.reason === "rate-limited"
    ? fault(
        "rate-limited",
        `no download link: ${e.reason}: ${e.message}`,
        e.retryAfterMillis === undefined ? undefined : { retryAfterMillis: e.retryAfterMillis }
      )
    : fault(e.reason === "unavailable" ? "transient" : "fatal", `no download link: ${e.reason}: ${e.message}`)

const io = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, TransferFault> =>
  Effect.tryPromise({ try: f, catch: (e) => faultFromError(e, what) })

const clearWake = (state: FileState): void => {
  state.wake = null
}

const parked = (fileId: string, reason: string, attempts: number): TransferResult => ({
  _tag: "Parked",
  fileId,
  reason,
  attempts
})

const pausedForSpace = (fileId: string, free: number, needed: number): TransferResult => ({
  _tag: "PausedForSpace",
  fileId,
  free,
  needed
})

const hexOf = (text: string): string => createHash("sha256").update(text).digest("hex")
