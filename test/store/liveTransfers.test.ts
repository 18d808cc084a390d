/** The live transfers row (migration 3): published whole, replaced, cleared, read by another connection. */
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Option } from "effect"
import { DATABASE_FILE, Database } from "../../src/store/Database.ts"
import type { LiveTransfers } from "../../src/store/liveTransfers.ts"
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/store/migrations.ts"
import { Store } from "../../src/store/Store.ts"
import { tempDir, withStore } from "./helpers.ts"

const live: LiveTransfers = {
  pid: 4242,
  waitingForSpace: 0,
  updatedAt: "2024-05-06T07:08:09.000Z",
  completed: 2,
  parked: 1,
  bytesPerSecond: 524_288,
  files: [
    { fileId: "f1", path: "Movies/big.mkv", size: 10_000_000, bytes: 2_500_000, bytesPerSecond: 262_144 },
    { fileId: "f2", path: "TV/e01.mkv", size: 3_000, bytes: 0, bytesPerSecond: 0 }
  ]
}

describe("store.liveTransfers", () => {
  it.effect(
    "reads back what was published, from another connection too; a publish replaces the last; clear empties",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        yield* withStore(
          dir,
          Effect.gen(function* () {
            const store = yield* Store
            assert.isTrue(Option.isNone(yield* store.liveTransfers.read))
            yield* store.liveTransfers.publish(live)
            assert.deepStrictEqual(yield* store.liveTransfers.read, Option.some(live))
          })
        )
        // `dlsync status` opens its own connection.
        yield* withStore(
          dir,
          Effect.gen(function* () {
            const store = yield* Store
            assert.deepStrictEqual(yield* store.liveTransfers.read, Option.some(live))
            const next = { ...live, updatedAt: "2024-05-06T07:08:10.000Z", files: [] }
            yield* store.liveTransfers.publish(next)
            assert.deepStrictEqual(yield* store.liveTransfers.read, Option.some(next))
            const { db } = yield* Database
            assert.strictEqual(db.prepare("SELECT count(*) FROM live_transfers").pluck().get(), 1, "one row, replaced")
          })
        )
        yield* withStore(
          dir,
          Effect.gen(function* () {
            const store = yield* Store
            yield* store.liveTransfers.clear
            assert.isTrue(Option.isNone(yield* store.liveTransfers.read))
          })
        )
      })
  )

  it.effect("rates are stored as whole bytes per second", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.liveTransfers.publish({
          ...live,
          bytesPerSecond: 1000.6,
          files: [{ fileId: "f1", path: "a", size: 10, bytes: 5, bytesPerSecond: 2.4 }]
        })
        const read = Option.getOrThrow(yield* store.liveTransfers.read)
        assert.strictEqual(read.bytesPerSecond, 1001)
        assert.strictEqual(read.files[0]?.bytesPerSecond, 2)
      })
    )
  )

  it.effect("migration 3 adds the table to a version 2 database", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const db = new BetterSqlite3(Path.join(dir, DATABASE_FILE))
      for (const m of MIGRATIONS.filter((m) => m.version <= 2)) db.exec(m.sql)
      db.pragma("user_version = 2")
      db.close()
      yield* withStore(
        dir,
        Effect.gen(function* () {
          const { db } = yield* Database
          assert.isAtLeast(SCHEMA_VERSION, 3)
          assert.strictEqual(db.pragma("user_version", { simple: true }), SCHEMA_VERSION)
          const store = yield* Store
          yield* store.liveTransfers.publish(live)
          assert.deepStrictEqual(yield* store.liveTransfers.read, Option.some(live))
        })
      )
    })
  )
})
