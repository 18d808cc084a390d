/** The outbox contract, run against both implementations; the SQLite one survives SIGKILL. */
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer, Redacted, Schema, type Scope } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttp, ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { FileId } from "../../src/api/schemas/common.ts"
import { AppStateOutbox } from "../../src/appstate/AppStateOutbox.ts"
import { AppStateWriter } from "../../src/appstate/AppStateWriter.ts"
import { APP_STATE_OUTBOX_DDL, SqliteOutbox } from "../../src/appstate/outboxSqlite.ts"
import { progressEntry } from "../../src/appstate/ProgressEntry.ts"
import { spawnChild } from "../auth/support/child.ts"
import { transportLayer, useEmulator, useStateDir } from "../auth/support/fixtures.ts"

const fileId = Schema.decodeSync(FileId)
const e = (bytes: number) =>
  progressEntry({ state: "downloading", bytes, size: 100, path: "a", updatedAtMs: 1_700_000_000_000 + bytes })

/** A real database file with the table, closed with the scope. */
const useDatabase = Effect.gen(function* () {
  const dir = yield* useStateDir
  const path = Path.join(dir, "state.db")
  return yield* Effect.acquireRelease(
    Effect.sync(() => {
      const db = new BetterSqlite3(path)
      db.pragma("journal_mode = WAL")
      db.pragma("synchronous = FULL")
      db.exec(APP_STATE_OUTBOX_DDL)
      return { db, path }
    }),
    ({ db }) => Effect.sync(() => db.close())
  )
})

const implementations: ReadonlyArray<
  readonly [string, Effect.Effect<Layer.Layer<AppStateOutbox>, never, Scope.Scope>]
> = [
  ["memory", Effect.succeed(AppStateOutbox.layerMemory)],
  ["sqlite", Effect.map(useDatabase, ({ db }) => SqliteOutbox.layer(db))]
]

describe.each(implementations)("AppStateOutbox (%s)", (_, makeLayer) => {
  it.effect("keeps one entry per file, oldest first; ack removes only the entry it names", () =>
    Effect.gen(function* () {
      const layer = yield* makeLayer
      yield* Effect.gen(function* () {
        const outbox = yield* AppStateOutbox
        yield* outbox.enqueue(fileId("a"), e(1))
        yield* outbox.enqueue(fileId("b"), e(2))
        yield* outbox.enqueue(fileId("a"), e(3))
        const first = yield* outbox.take(10)
        assert.deepStrictEqual(
          first.map((i) => [i.fileId, i.entry.bytes]),
          [
            ["b", 2],
            ["a", 3]
          ]
        )
        assert.isBelow(first[0]!.seq, first[1]!.seq)
        // "a" changes while its entry is being written: acking the old one keeps the new one.
        yield* outbox.enqueue(fileId("a"), e(4))
        for (const item of first) yield* outbox.ack(item)
        const rest = yield* outbox.take(10)
        assert.deepStrictEqual(
          rest.map((i) => [i.fileId, i.entry.bytes]),
          [["a", 4]]
        )
        assert.strictEqual(yield* outbox.size, 1)
        assert.strictEqual((yield* outbox.take(0)).length, 0)
      }).pipe(Effect.provide(layer, { local: true }))
    })
  )
})

describe("SQLite outbox", () => {
  // Real time: a child process is SIGKILLed and its outbox read back by a new writer.
  it.effect("drops an entry it cannot read (written by another version) instead of blocking the queue", () =>
    Effect.gen(function* () {
      const { db } = yield* useDatabase
      db.prepare("INSERT INTO app_state_outbox (file_id, seq, entry, enqueued_at) VALUES ('old', 1, '{}', 0)").run()
      yield* Effect.gen(function* () {
        const outbox = yield* AppStateOutbox
        yield* outbox.enqueue(fileId("new"), e(5))
        assert.deepStrictEqual(
          (yield* outbox.take(10)).map((i) => i.fileId),
          ["new"]
        )
        assert.strictEqual(yield* outbox.size, 1)
      }).pipe(Effect.provide(SqliteOutbox.layer(db), { local: true }))
    }).pipe(Effect.scoped)
  )

  it.live("entries enqueued by a process that is SIGKILLed survive and are written after restart", () =>
    Effect.gen(function* () {
      const emulator = yield* useEmulator()
      const { db, path } = yield* useDatabase
      const files = [1, 2, 3].map((i) => emulator.control.addFile({ name: `f${i}.mkv`, sizeBytes: 100 }))
      const child = yield* spawnChild(Path.resolve("test/appstate/support/outboxChild.ts"), [
        JSON.stringify({ db: path, fileIds: files.map((f) => f.id) })
      ])
      yield* Effect.promise(() => child.waitForLine((l) => l === "enqueued"))
      child.process.kill("SIGKILL")
      yield* Effect.promise(() => child.exited)

      yield* Effect.gen(function* () {
        const outbox = yield* AppStateOutbox
        assert.strictEqual(yield* outbox.size, 3)
        yield* (yield* AppStateWriter).drain
        assert.strictEqual(yield* outbox.size, 0)
        const api = yield* ApiClient
        for (const f of files) {
          const state = yield* api.state.get(fileId(f.id))
          assert.isNotNull(state)
          assert.include(JSON.stringify(state!.value), '"state":"complete"')
        }
      }).pipe(
        Effect.provide(
          AppStateWriter.layer({ deviceId: "dev", progressIntervalMs: 30_000, maxRequestsPerMinute: 300 }).pipe(
            Layer.provideMerge(SqliteOutbox.layer(db)),
            Layer.provideMerge(
              ApiClient.layer.pipe(
                Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
                Layer.provide(Credentials.apiKey(Redacted.make(emulator.accessToken))),
                Layer.provideMerge(transportLayer(emulator))
              )
            )
          ),
          { local: true }
        )
      )
    })
  )
})
