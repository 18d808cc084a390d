/**
 * One ZIP job: the files of one group fetched as one archive and landed one by one.
 *
 *   POST /files/zip (their ids) ─► GET (one stream) ─► ZipStreamReader ─► each member:
 *     its name selects the planned file (archiveName; nothing else of it is used: the path
 *     is the plan's) ─► MemberFile (partial under .dlsync/partial/.zip, size and CRC-32
 *     checked) ─► a batch ─► landBatch (fsync together, checked renames, folder fsyncs)
 *     ─► `record` (the caller's one commit)
 *
 * A member that is missing, extra, a second copy of a name, larger or smaller than planned,
 * of a wrong CRC, encrypted or compressed other than stored or deflate fails alone: its file
 * goes back to the caller for the per-file path. A failure of the archive itself (the link
 * refused, the body cut, a record the reader cannot follow, a disk error) stops it there:
 * what landed stays landed, and the rest is asked again in a new archive while the last one
 * brought something (at most MAX_ARCHIVES), else goes back to the caller too.
 */
import * as NodePath from "node:path"
import { Clock, Effect } from "effect"
import { ApiClient } from "../../api/ApiClient.ts"
import type { DownloadAction } from "../../sync/executor.ts"
import { type FileProgress, ProgressTracker } from "../ProgressTracker.ts"
import { partialPathFor } from "../TransferEngine.ts"
import { TransferFs } from "../TransferFs.ts"
import { archiveNameOf } from "./archiveName.ts"
import { type Landing, landBatch, type VerifiedMember } from "./landingBatch.ts"
import { MemberFile } from "./memberFile.ts"
import { openZipBody, type ZipAgents, ZipFetchError, type ZipGetOptions } from "./zipBody.ts"
import { type MemberHeader, ZipStreamReader } from "./zipStreamReader.ts"

/** Where members are written until they land (a name the per-file path's partials never take). */
export const ZIP_PARTIAL_DIR = NodePath.join(".dlsync", "partial", ".zip")

/** Archives asked for one job: a new one for what is left only after one that brought something. */
export const MAX_ARCHIVES = 3

export interface ZipJobSettings extends ZipGetOptions {
  readonly root: string
  /** A batch is made durable once it holds this many files… */
  readonly batchFiles: number
  /** …or this many bytes… */
  readonly batchBytes: number
  /** …or its first file has waited this long. */
  readonly batchMs: number
}

export interface ZipJobResult {
  /** Files the archives did not bring, each with why: for the per-file path. */
  readonly perFile: ReadonlyArray<{ readonly action: DownloadAction; readonly reason: string }>
}

export const runZipJob = (
  agents: ZipAgents,
  settings: ZipJobSettings,
  job: ReadonlyArray<DownloadAction>,
  record: (landings: ReadonlyArray<Landing>) => Effect.Effect<void>
): Effect.Effect<ZipJobResult, never, ApiClient | TransferFs | ProgressTracker> =>
  Effect.gen(function* () {
    let left = [...job]
    const refused = new Map<DownloadAction, string>()
    let stopped: string | undefined
    for (let archive = 1; left.length > 0 && archive <= MAX_ARCHIVES; archive++) {
      const attempt = yield* oneArchive(agents, settings, left, record)
      for (const [action, reason] of attempt.refused) refused.set(action, reason)
      left = left.filter((a) => !attempt.done.has(a) && !attempt.refused.has(a))
      stopped = attempt.stopped
      if (stopped === undefined) break
      yield* Effect.logDebug("zip archive stopped").pipe(
        Effect.annotateLogs({ reason: stopped, landed: attempt.done.size, left: left.length })
      )
      if (attempt.done.size === 0 || !attempt.askAgain) break
    }
    const missing = stopped ?? "missing from the archive"
    return {
      perFile: job.flatMap((action) => {
        const reason = refused.get(action) ?? (left.includes(action) ? missing : undefined)
        return reason === undefined ? [] : [{ action, reason }]
      })
    }
  })

interface Attempt {
  /** Landed or failed for good (recorded). */
  readonly done: Set<DownloadAction>
  /** Members refused (for the per-file path), with the reason. */
  readonly refused: Map<DownloadAction, string>
  /** Why the archive stopped before its end; undefined when read to its end. */
  stopped: string | undefined
  /** Whether a new archive may bring the rest (not after a disk error). */
  askAgain: boolean
}

/** Current member: a planned file being written, or one skipped. */
type Current =
  | {
      readonly _tag: "File"
      readonly action: DownloadAction
      readonly file: MemberFile
      readonly progress: FileProgress
    }
  | { readonly _tag: "Skip" }

const oneArchive = (
  agents: ZipAgents,
  settings: ZipJobSettings,
  actions: ReadonlyArray<DownloadAction>,
  record: (landings: ReadonlyArray<Landing>) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const api = yield* ApiClient
    const fs = yield* TransferFs
    const tracker = yield* ProgressTracker
    const attempt: Attempt = { done: new Set(), refused: new Map(), stopped: undefined, askAgain: true }
    const byName = new Map(actions.map((a) => [archiveNameOf(a.item.name), a]))
    const seen = new Set<DownloadAction>()
    let batch: Array<VerifiedMember> = []
    let batchBytes = 0
    let batchSince = 0
    let current: Current | undefined

    const refuse = (action: DownloadAction, reason: string) => attempt.refused.set(action, reason)

    const commit = Effect.gen(function* () {
      if (batch.length === 0) return
      const taken = batch
      batch = []
      batchBytes = 0
      const started = yield* Clock.currentTimeMillis
      const landings = yield* landBatch(fs, settings.root, taken)
      const landed = yield* Clock.currentTimeMillis
      yield* record(landings.filter((l) => l._tag !== "Retry"))
      yield* Effect.logDebug("zip batch landed").pipe(
        Effect.annotateLogs({
          files: taken.length,
          durableAndLandedMillis: landed - started,
          recordMillis: (yield* Clock.currentTimeMillis) - landed
        })
      )
      for (const landing of landings) {
        if (landing._tag === "Retry") refuse(landing.action, landing.reason)
        else attempt.done.add(landing.action)
      }
    })

    /** A member's header: which planned file it is, if any, and whether it can be read. */
    const begin = Effect.fnUntraced(function* (header: MemberHeader, reader: ZipStreamReader) {
      const action = byName.get(archiveNameOf(header.name))
      if (action === undefined || header.name.endsWith("/")) return { _tag: "Skip" } satisfies Current
      if (seen.has(action)) return { _tag: "Skip" } satisfies Current // a second member of that name: extra
      seen.add(action)
      const expected = action.item.size
      const problem = header.encrypted
        ? "it is encrypted in the archive"
        : header.method !== 0 && header.method !== 8
          ? `it is compressed with method ${header.method} in the archive (stored and deflate are read)`
          : header.method === 0 && header.size !== undefined && header.size !== expected
            ? `the archive has ${header.size} bytes for it, ${expected} expected`
            : undefined
      if (problem !== undefined) {
        refuse(action, problem)
        return { _tag: "Skip" } satisfies Current
      }
      if (header.method === 0 && header.compressedSize === undefined) reader.expectCompressedSize(expected)
      const path = NodePath.join(settings.root, ZIP_PARTIAL_DIR, NodePath.basename(partialPathFor(action.item.id)))
      const file = yield* MemberFile.open(fs, path, expected, header.method === 8 ? 8 : 0)
      const progress = tracker.start(action.item.id, action.path, expected, 0, yield* Clock.currentTimeMillis)
      return { _tag: "File", action, file, progress } satisfies Current
    })

    const body = yield* Effect.result(api.files.zip(actions.map((a) => a.item.id)))
    if (body._tag === "Failure") {
      attempt.stopped = `the service gave no archive: ${body.failure.message}`
      attempt.askAgain = false
      return attempt
    }
    const reader = new ZipStreamReader()
    const read = yield* Effect.result(
      Effect.scoped(
        Effect.gen(function* () {
          yield* Effect.tryPromise(() => fs.mkdirp(NodePath.join(settings.root, ZIP_PARTIAL_DIR)))
          const response = yield* openZipBody(agents, body.success.url, settings)
          while (true) {
            const event = reader.next()
            if (event === undefined) {
              const chunk = yield* response.read
              if (chunk === undefined) reader.finish()
              else reader.push(chunk)
              continue
            }
            switch (event._tag) {
              case "Member":
                current = yield* begin(event.header, reader)
                break
              case "Data":
                if (current?._tag === "File") {
                  current.progress.done += event.bytes.length
                  current.progress.fetched += event.bytes.length
                  yield* current.file.write(event.bytes)
                }
                break
              case "MemberEnd": {
                const member = current
                current = undefined
                if (member?._tag !== "File") break
                const verdict = yield* member.file.finish(event)
                tracker.end(member.progress, verdict.ok ? "completed" : "parked")
                if (!verdict.ok) {
                  refuse(member.action, verdict.reason)
                  yield* member.file.discard()
                  break
                }
                if (batch.length === 0) batchSince = yield* Clock.currentTimeMillis
                batch.push({ action: member.action, file: member.file })
                batchBytes += member.action.item.size
                const now = yield* Clock.currentTimeMillis
                if (
                  batch.length >= settings.batchFiles ||
                  batchBytes >= settings.batchBytes ||
                  now - batchSince >= settings.batchMs
                ) {
                  yield* commit
                }
                break
              }
              case "End":
                // Read to the end (a few bytes per member) so that the connection is reused.
                while ((yield* response.read) !== undefined) {}
                return undefined
              case "Broken":
                return `the archive cannot be read further: ${event.reason}`
            }
          }
        })
      ).pipe(
        // An open member's bytes were not all written: dropped, its file left for the rest.
        Effect.ensuring(
          Effect.suspend(() => {
            const open = current
            current = undefined
            if (open?._tag !== "File") return Effect.void
            tracker.end(open.progress, "parked")
            return open.file.discard()
          })
        )
      )
    )
    yield* commit
    if (read._tag === "Success") attempt.stopped = read.success
    else {
      attempt.stopped = `the archive stopped: ${describe(read.failure)}`
      // Only the network's failures are worth another archive; the disk's would repeat.
      attempt.askAgain = read.failure instanceof ZipFetchError
    }
    return attempt
  }).pipe(Effect.withSpan("ZipJob.archive", { attributes: { files: actions.length } }))

const describe = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)
