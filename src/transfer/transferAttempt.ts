/**
 * One attempt at a transfer (TransferEngine.ts runs them): open the partial file, fetch every
 * missing byte (segmentWorkers.ts) beside the durability committer, then finalize — size
 * check, mtime, fsync, close, the checked rename into place (fs/landFile.ts `land`), fsync of
 * its folder — and forget the journal record.
 */
import * as NodePath from "node:path"
import { Clock, Effect, Fiber, type Scope } from "effect"
import type { LocalStat } from "../domain/LocalEntry.ts"
import type { LocalOpError } from "../fs/LocalOpError.ts"
import { land } from "../fs/landFile.ts"
import { linkFor } from "./downloadLinks.ts"
import { commit, commitLoop, markWriter } from "./durabilityCommitter.ts"
import type { FileProgress } from "./ProgressTracker.ts"
import { allWritten, planSegments, writtenBytes } from "./segments.ts"
import { fetchMissing } from "./segmentWorkers.ts"
import { fault, type TransferFault } from "./TransferFault.ts"
import type { TransferRequest } from "./transferRequest.ts"
import { type Deps, type FileState, io, type PartialFile } from "./transferState.ts"
import { markPathFor } from "./writtenMark.ts"

/**
 * One attempt: open, fetch every missing byte, and on success land the file. Returns the
 * landed file's lstat, or the landing's refusal (the verified partial data is then dropped).
 */
export const attempt = Effect.fnUntraced(function* (
  deps: Deps,
  request: TransferRequest,
  partialAbs: string,
  partialRel: string,
  state: FileState,
  fp: FileProgress
): Effect.fn.Return<LocalStat | LocalOpError, TransferFault, Scope.Scope> {
  const { options, fs } = deps
  const target = partialFile(request, partialRel, partialAbs)
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

  let arrivedAt: number | undefined
  if (!allWritten(segments)) {
    state.toArrive = request.size - writtenBytes(segments)
    const link = yield* linkFor(deps, request.fileId)
    const mark = small || options.bootId === null ? undefined : yield* markWriter(deps, target, state)
    const committer = small ? undefined : yield* Effect.forkScoped(commitLoop(deps, target, state, file.fd, mark))
    const work = fetchMissing(deps, target, state, fp, {
      link,
      fd: file.fd,
      segments,
      segmented,
      onBatch: (written) => mark?.update(written)
    })
    const result = yield* Effect.result(work)
    arrivedAt = yield* Clock.currentTimeMillis
    if (committer !== undefined) yield* Fiber.interrupt(committer)
    if (result._tag === "Failure" && result.failure.kind !== "restart") {
      // Keep what was written: make it durable (and marked) so a later run resumes from it.
      yield* Effect.ignore(commit(deps, target, state, file.fd, mark))
    }
    if (mark !== undefined) yield* Effect.promise(() => mark.close())
    if (result._tag === "Failure") return yield* result.failure
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
  const fsyncStarted = yield* Clock.currentTimeMillis
  yield* io("fsync", () => fs.fsync(file.fd))
  const durableAt = yield* Clock.currentTimeMillis
  yield* Effect.logDebug("transfer durable").pipe(
    Effect.annotateLogs({
      // What the download left for the final fsync, how long the file took to be durable
      // after its last byte (a commit in flight, then the fsync), and how often the writes
      // waited for a commit.
      unsyncedBytes: state.unsynced,
      fsyncMillis: durableAt - fsyncStarted,
      afterLastByteMillis: durableAt - (arrivedAt ?? fsyncStarted),
      writesHeld: state.writesHeld
    })
  )
  state.unsynced = 0
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

/** The partial file of `request`. */
export const partialFile = (request: TransferRequest, partialRel: string, partialAbs: string): PartialFile => ({
  fileId: request.fileId,
  size: request.size,
  partialRel,
  partialAbs
})
