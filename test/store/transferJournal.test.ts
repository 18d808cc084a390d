import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { recordProblem } from "../../src/store/transferJournal.ts"
import { TransferJournal, type TransferRecord } from "../../src/transfer/TransferJournal.ts"
import { tempDir, withStore } from "./helpers.ts"

const record: TransferRecord = {
  fileId: "f1",
  size: 1000,
  etag: '"abc"',
  lastModified: "Sun, 22 Nov 2026 04:00:00 GMT",
  partialPath: ".dlsync/partial/f1",
  segments: [
    { start: 500, end: 1000, durable: 10 },
    { start: 0, end: 500, durable: 500 }
  ],
  attempts: 2,
  lastError: "timeout"
}

describe("transfer journal (SQLite)", () => {
  it.effect("saves, reloads after a reopen, replaces and removes a record with its segments", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      yield* withStore(
        dir,
        TransferJournal.use((j) => j.save(record))
      )
      const loaded = yield* withStore(
        dir,
        TransferJournal.use((j) => j.load("f1"))
      )
      assert.deepStrictEqual(
        loaded,
        Option.some({ ...record, segments: [...record.segments].sort((a, b) => a.start - b.start) })
      )
      const fewer = { ...record, segments: [{ start: 0, end: 1000, durable: 700 }], etag: null }
      yield* withStore(
        dir,
        TransferJournal.use((j) => j.save(fewer))
      )
      assert.deepStrictEqual(
        yield* withStore(
          dir,
          TransferJournal.use((j) => j.load("f1"))
        ),
        Option.some(fewer)
      )
      yield* withStore(
        dir,
        TransferJournal.use((j) => j.remove("f1"))
      )
      assert.deepStrictEqual(
        yield* withStore(
          dir,
          TransferJournal.use((j) => j.load("f1"))
        ),
        Option.none()
      )
    })
  )

  it.effect("refuses a record that breaks the journal's invariants, keeping the previous one", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      yield* withStore(
        dir,
        TransferJournal.use((j) => j.save(record))
      )
      const bad = {
        ...record,
        segments: [
          { start: 0, end: 600, durable: 0 },
          { start: 500, end: 1000, durable: 0 }
        ]
      }
      const exit = yield* Effect.exit(
        withStore(
          dir,
          TransferJournal.use((j) => j.save(bad))
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "overlaps")
      assert.strictEqual(
        Option.getOrThrow(
          yield* withStore(
            dir,
            TransferJournal.use((j) => j.load("f1"))
          )
        ).attempts,
        2
      )
    })
  )

  it("names what is wrong with a record", () => {
    assert.isNull(recordProblem({ ...record, size: 0, segments: [] }))
    assert.include(recordProblem({ ...record, partialPath: "../x" }) ?? "", "not inside the mirror root")
    assert.include(recordProblem({ ...record, segments: [{ start: 0, end: 2000, durable: 0 }] }) ?? "", "outside")
    assert.include(recordProblem({ ...record, segments: [{ start: 0, end: 10, durable: 11 }] }) ?? "", "durable 11")
    assert.include(recordProblem({ ...record, size: -1 }) ?? "", "size -1")
  })
})
