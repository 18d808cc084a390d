/**
 * The mirror engine's side of per-file app state: the engine says what happened to a file
 * (queued, downloading, complete, failed, locked, skipped) and this stamps the time and
 * hands the entry to the AppStateWriter.
 *
 *   TransferDownloads (queued · downloading · complete · failed) ─┐
 *   MirrorPass (locked · skipped) ───────────────────────────────┴─► report ─► AppStateWriter.report
 *
 * Invariants:
 * - `report` never fails and never waits on the network (AppStateWriter.report is a Ref
 *   update and at most one local outbox insert); a defect there (the state database full
 *   or broken) is logged once and the engine goes on: app state never stops a transfer.
 * - An entry equal to the last one reported for the file in this process (state, bytes,
 *   size, path, error) is not reported again, so a file skipped or locked at every pass
 *   costs no write after the first.
 * - `downloading` is reported only while the file's last report is `queued` or
 *   `downloading`: a late progress sample never follows (and overwrites) the final entry.
 *   Reports are serialized, so this order is the order the writer sees.
 */
import { Clock, Context, Effect, Layer, Semaphore } from "effect"
import type { FileId } from "../domain/FileId.ts"
import { AppStateWriter } from "./AppStateWriter.ts"
import { type ProgressState, progressEntry } from "./ProgressEntry.ts"

/** Files whose last report is remembered for the repeat check (oldest forgotten first). */
export const REMEMBERED_FILES = 100_000

export interface FileReport {
  readonly state: ProgressState
  /** Bytes of the file this device has. */
  readonly bytes: number
  /** The remote size. */
  readonly size: number
  /** The mirror path, relative to the root. */
  readonly path: string
  readonly error?: string | undefined
}

export class FileProgress extends Context.Service<
  FileProgress,
  {
    /** Records what happened to a remote file; returns at once (see invariants). */
    report(fileId: FileId, report: FileReport): Effect.Effect<void>
  }
>()("dlsync/appstate/FileProgress") {
  static readonly layer: Layer.Layer<FileProgress, never, AppStateWriter> = Layer.effect(
    FileProgress,
    Effect.gen(function* () {
      const writer = yield* AppStateWriter
      /** The last report of each file: its state and the whole entry's key. */
      const last = new Map<string, { readonly state: ProgressState; readonly key: string }>()
      const serial = yield* Semaphore.make(1)
      let warned = false

      const report = Effect.fnUntraced(function* (fileId: FileId, r: FileReport) {
        const key = JSON.stringify([r.state, r.bytes, r.size, r.path, r.error ?? null])
        const previous = last.get(fileId)
        if (previous?.key === key) return
        if (r.state === "downloading" && previous?.state !== "queued" && previous?.state !== "downloading") return
        last.delete(fileId)
        last.set(fileId, { state: r.state, key })
        if (last.size > REMEMBERED_FILES) last.delete(last.keys().next().value!)
        const now = yield* Clock.currentTimeMillis
        yield* writer.report(fileId, progressEntry({ ...r, updatedAtMs: now }))
      })

      return FileProgress.of({
        report: (fileId, r) =>
          serial.withPermit(report(fileId, r)).pipe(
            Effect.catchDefect((defect) => {
              // Forget the entry so a later report of it is tried again.
              last.delete(fileId)
              if (warned) return Effect.void
              warned = true
              return Effect.logWarning("app state: cannot record progress; the mirror goes on without it").pipe(
                Effect.annotateLogs({ error: String(defect) })
              )
            })
          )
      })
    })
  )
}
