/**
 * A transfer's resume record: what the journal and the written mark say of a file's partial
 * data when a call starts, what is saved back, and the validators its bytes belong to.
 */
import { Effect, Option } from "effect"
import type { Validators } from "./judgeResponse.ts"
import { durableBytes, fromDurable } from "./segments.ts"
import { fault, type TransferFault } from "./TransferFault.ts"
import type { TransferRecord } from "./TransferJournal.ts"
import { type Deps, type FileState, io, type PartialFile } from "./transferState.ts"
import { markCovers, markPathFor, readMark } from "./writtenMark.ts"

/** The file's state from its journal record and written mark (both checked against the request). */
export const loadState = Effect.fnUntraced(function* (deps: Deps, file: PartialFile): Effect.fn.Return<FileState> {
  const loaded = yield* deps.journal.load(file.fileId)
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
    toArrive: 0,
    writesHeld: 0,
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
  if (r === undefined && (deps.options.bootId === null || file.size <= deps.options.bufferSize)) return state
  const onDisk = yield* Effect.orElseSucceed(
    io("stat", () => deps.fs.size(file.partialAbs)),
    () => undefined
  )
  if (onDisk !== file.size) return state
  // Bytes a killed process wrote after its last commit are still in this boot's page cache.
  const markText = yield* Effect.orElseSucceed(
    io("read mark", () => deps.fs.readHead(markPathFor(file.partialAbs), MARK_MAX_BYTES)),
    () => undefined
  )
  const marked = markText === undefined ? undefined : readMark(markText, deps.options.bootId, file.size)
  if (r === undefined) {
    // Killed before its first commit: nothing is durable, but the mark holds what it wrote.
    if (marked === undefined) return state
    state.segments = marked.segments
    state.etag = marked.etag
    state.lastModified = marked.lastModified
    state.validatorsKnown = true
    return state
  }
  const segments = fromDurable(r.segments, file.size)
  if (r.size !== file.size || r.partialPath !== file.partialRel || segments === undefined) return state
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

export const saveRecord = (deps: Deps, file: PartialFile, state: FileState): Effect.Effect<void> =>
  // Only bytes committed by `commit` are claimed durable, never positions written since.
  deps.journal.save(record(file, state)).pipe(
    Effect.tap(() =>
      Effect.sync(() => {
        state.journaled = true
      })
    )
  )

export const record = (file: PartialFile, state: FileState): TransferRecord => ({
  fileId: file.fileId,
  size: file.size,
  etag: state.etag,
  lastModified: state.lastModified,
  partialPath: file.partialRel,
  segments: state.durable,
  attempts: state.attempts,
  lastError: state.lastError
})

/** Learns the validators from the first response of a version; later ones must agree. */
export const checkValidators = (state: FileState, v: Validators): TransferFault | undefined => {
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
export const ifRangeValue = (state: FileState): string | null =>
  state.etag !== null && !state.etag.startsWith("W/") ? state.etag : state.lastModified

/** Forgets the partial data: the next attempt starts from zero, learning the version anew. */
export const resetToZero = (state: FileState, noRanges: boolean): void => {
  state.segments = null
  state.durable = []
  state.etag = null
  state.lastModified = null
  state.validatorsKnown = false
  state.noRanges = state.noRanges || noRanges
  state.unsynced = 0
}
