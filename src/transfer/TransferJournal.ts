/**
 * The transfer journal: the durable progress of unfinished transfers, one record per file.
 *
 * Contract: a record's `segments[i].durable` bytes from `start` were fsynced to
 * `partialPath` before the record was saved; `save` is one transaction (a crash leaves
 * the previous record or the new one, never a mix). The store implements it over SQLite
 * (src/store/transferJournal.ts); `layerMemory` serves unit tests.
 */
import { Context, Effect, Layer, Option } from "effect"

export interface TransferRecord {
  readonly fileId: string
  readonly size: number
  readonly etag: string | null
  readonly lastModified: string | null
  readonly partialPath: string // relative to the mirror root
  /** Byte ranges [start, end) assigned to parallel segments; `durable` = bytes from start known fsynced. */
  readonly segments: ReadonlyArray<{ readonly start: number; readonly end: number; readonly durable: number }>
  readonly attempts: number
  readonly lastError: string | null
}

export class TransferJournal extends Context.Service<
  TransferJournal,
  {
    readonly load: (fileId: string) => Effect.Effect<Option.Option<TransferRecord>>
    readonly save: (record: TransferRecord) => Effect.Effect<void> // one transaction
    readonly remove: (fileId: string) => Effect.Effect<void>
  }
>()("dlsync/transfer/TransferJournal") {
  /** A journal in memory, fresh for each layer build: for unit tests only (nothing survives a crash). */
  static readonly layerMemory = Layer.sync(TransferJournal, () => TransferJournal.of(makeMemoryJournal(new Map())))
}

/** An in-memory journal over `records`, which tests may inspect. */
export const makeMemoryJournal = (records: Map<string, TransferRecord>): TransferJournal["Service"] => ({
  load: (fileId) => Effect.sync(() => Option.fromNullishOr(records.get(fileId))),
  save: (record) =>
    Effect.sync(() => {
      records.set(record.fileId, record)
    }),
  remove: (fileId) =>
    Effect.sync(() => {
      records.delete(fileId)
    })
})
