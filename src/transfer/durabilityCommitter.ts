/**
 * Durability for one transfer: a committer that batches fdatasync + journal save (by bytes
 * written, see commitPolicy.ts, or time elapsed), and the written mark kept current as
 * batches are written (writtenMark.ts `markInterval`) and at each commit. The committer runs
 * beside the segment writers, so the data is flushed while it downloads; writes wait for it
 * only when a whole batch more is written while it flushes (segmentWorkers.ts `admit`).
 */
import * as NodePath from "node:path"
import { Clock, Effect } from "effect"
import { commitDue } from "./commitPolicy.ts"
import { record } from "./resumeRecords.ts"
import { snapshotSegments } from "./segments.ts"
import { faultFromError, type TransferFault } from "./TransferFault.ts"
import { type Deps, type FileState, io, type PartialFile } from "./transferState.ts"
import { encodeMark, type MarkWriter, markInterval, markPathFor, openMarkWriter } from "./writtenMark.ts"

/** Batches durability: wakes when a flush is due (commitPolicy.ts) or `durabilityMs` elapsed, then commits. */
export const commitLoop = (
  deps: Deps,
  file: PartialFile,
  state: FileState,
  fd: number,
  mark: MarkWriter | undefined
): Effect.Effect<void, never> =>
  Effect.forever(
    Effect.suspend(() =>
      commitDue(state.unsynced, state.toArrive, deps.options.durabilityBytes)
        ? Effect.void
        : Effect.raceFirst(Effect.sleep(deps.options.durabilityMs), bytesWritten(state))
    ).pipe(Effect.andThen(Effect.ignore(commit(deps, file, state, fd, mark))))
  )

/** Completes when the writes wake the committer (a flush became due). */
const bytesWritten = (state: FileState): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    state.wake = () => {
      state.wake = null
      resume(Effect.void)
    }
    return Effect.sync(() => {
      state.wake = null
    })
  })

/**
 * fdatasync, then save the positions written before it started. The mark is written
 * meanwhile, so it covers what the journal will call durable. Uninterruptible.
 */
export const commit = (
  deps: Deps,
  file: PartialFile,
  state: FileState,
  fd: number,
  mark: MarkWriter | undefined
): Effect.Effect<void, TransferFault> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      if (state.unsynced === 0 || state.segments === null) return
      const snapshot = snapshotSegments(state.segments)
      const bytes = state.unsynced
      state.unsynced = 0
      state.committing = true
      if (!state.partialDirSynced) {
        yield* io("fsync dir", () => deps.fs.fsyncDir(NodePath.dirname(file.partialAbs)))
        state.partialDirSynced = true
      }
      const started = yield* Clock.currentTimeMillis
      const marked = mark?.flush()
      yield* Effect.callback<void, TransferFault>((resume) => {
        deps.fs.fdatasync(fd, (e) => resume(e === null ? Effect.void : Effect.fail(faultFromError(e, "fdatasync"))))
      })
      if (marked !== undefined) yield* Effect.promise(() => marked)
      const synced = yield* Clock.currentTimeMillis
      state.durable = snapshot
      yield* deps.journal.save(record(file, state))
      state.journaled = true
      yield* Effect.logDebug("durability batch committed").pipe(
        Effect.annotateLogs({
          bytes,
          fdatasyncMillis: synced - started,
          journalMillis: (yield* Clock.currentTimeMillis) - synced
        })
      )
    }).pipe(Effect.ensuring(Effect.sync(() => releaseHeld(state))))
  )

const releaseHeld = (state: FileState): void => {
  state.committing = false
  for (const resume of state.held.splice(0)) resume()
}

/** The transfer's written mark, kept current as batches are written and closed with the attempt. */
export const markWriter = (deps: Deps, file: PartialFile, state: FileState) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      openMarkWriter(deps.fs, markPathFor(file.partialAbs), markInterval(file.size), () =>
        // Unknown validators would let a mark outlive a version change: no mark then.
        state.segments === null || !state.validatorsKnown || deps.options.bootId === null
          ? undefined
          : encodeMark(deps.options.bootId, {
              size: file.size,
              etag: state.etag,
              lastModified: state.lastModified,
              segments: state.segments
            })
      ).catch(() => undefined)
    ),
    (writer) => Effect.promise(() => writer?.close() ?? Promise.resolve())
  )
