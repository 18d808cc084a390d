/**
 * The durable queue of app-state entries waiting to be written: at most one per file
 * (a newer entry for a file replaces the older one), so a crash never loses a final
 * `complete` or `failed`, and a backlog never grows beyond the number of files.
 *
 * Contract, for every implementation:
 * - `enqueue` is durable when it returns (the SQLite one commits), and gives the file's
 *   entry a sequence number greater than any given before.
 * - `take(n)` returns up to n items, oldest sequence first, without removing them.
 * - `ack(item)` removes the file's entry only if it still has `item.seq`: an entry that
 *   replaced it while it was being written stays queued.
 */
import { Context, Effect, Layer } from "effect"
import type { FileId } from "../domain/FileId.ts"
import type { ProgressEntry } from "./ProgressEntry.ts"

export interface OutboxItem {
  readonly fileId: FileId
  readonly entry: ProgressEntry
  readonly seq: number
}

export class AppStateOutbox extends Context.Service<
  AppStateOutbox,
  {
    enqueue(fileId: FileId, entry: ProgressEntry): Effect.Effect<void>
    take(limit: number): Effect.Effect<ReadonlyArray<OutboxItem>>
    ack(item: OutboxItem): Effect.Effect<void>
    readonly size: Effect.Effect<number>
  }
>()("dlsync/appstate/AppStateOutbox") {
  /** In memory: for tests and for runs without a store. */
  static readonly layerMemory: Layer.Layer<AppStateOutbox> = Layer.sync(AppStateOutbox, () => {
    const items = new Map<FileId, OutboxItem>()
    let seq = 0
    return AppStateOutbox.of({
      enqueue: (fileId, entry) =>
        Effect.sync(() => {
          items.set(fileId, { fileId, entry, seq: ++seq })
        }),
      take: (limit) => Effect.sync(() => [...items.values()].sort((a, b) => a.seq - b.seq).slice(0, limit)),
      ack: (item) =>
        Effect.sync(() => {
          if (items.get(item.fileId)?.seq === item.seq) items.delete(item.fileId)
        }),
      size: Effect.sync(() => items.size)
    })
  })
}
