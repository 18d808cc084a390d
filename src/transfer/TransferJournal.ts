/**
 * The transfer journal: the durable progress of unfinished transfers, one record per file.
 *
 * Contract: a record's `segments[i].durable` bytes from `start` were fsynced to
 * `partialPath` before the record was saved; `save` is one transaction (a crash leaves
 * the previous record or the new one, never a mix). `layerDatabase` keeps it in the state database
 * (its SQL in src/store/transferJournal.ts); `layerMemory` serves unit tests.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { TransferRecord } from "../domain/TransferRecord.ts"
import { Database } from "../store/Database.ts"
import { makeTransferJournalTable } from "../store/transferJournal.ts"

export type { TransferRecord }

export class TransferJournal extends Context.Service<
  TransferJournal,
  {
    readonly load: (fileId: string) => Effect.Effect<Option.Option<TransferRecord>>
    readonly save: (record: TransferRecord) => Effect.Effect<void> // one transaction
    readonly remove: (fileId: string) => Effect.Effect<void>
  }
>()("dlsync/transfer/TransferJournal") {
  /** In the state database: what `dlsync run` uses. */
  static readonly layerDatabase: Layer.Layer<TransferJournal, never, Database> = Layer.effect(
    TransferJournal,
    Effect.gen(function* () {
      const { db } = yield* Database
      return TransferJournal.of(makeTransferJournalTable(db))
    })
  )
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
