/** Migration 2: the app-state outbox table, added to a version 1 database in place. */
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"
import { FileId } from "../../src/api/schemas/common.ts"
import { AppStateOutbox } from "../../src/appstate/AppStateOutbox.ts"
import { SqliteOutbox } from "../../src/appstate/outboxSqlite.ts"
import { progressEntry } from "../../src/appstate/ProgressEntry.ts"
import { DATABASE_FILE, Database } from "../../src/store/Database.ts"
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/store/migrations.ts"
import { Store } from "../../src/store/Store.ts"
import { tempDir, withStore } from "./helpers.ts"

const entry = progressEntry({ state: "complete", bytes: 5, size: 5, path: "a/b", updatedAtMs: 1_700_000_000_000 })

describe("migration 2 (app_state_outbox)", () => {
  it.effect("upgrades a version 1 database, keeping its rows, and the outbox works over the store's handle", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const v1 = MIGRATIONS.find((m) => m.version === 1) ?? assert.fail("no migration 1")
      const db = new BetterSqlite3(Path.join(dir, DATABASE_FILE))
      db.exec(v1.sql)
      db.pragma("user_version = 1")
      db.prepare("INSERT INTO events (at, level, kind, message) VALUES ('t', 'info', 'old', 'kept')").run()
      db.close()

      yield* withStore(
        dir,
        Effect.gen(function* () {
          const { db } = yield* Database
          assert.strictEqual(db.pragma("user_version", { simple: true }), SCHEMA_VERSION)
          const events = yield* (yield* Store).events.recent(10)
          assert.deepStrictEqual(
            events.map((e) => e.message),
            ["kept"]
          )
          const outbox = yield* AppStateOutbox
          yield* outbox.enqueue(Schema.decodeSync(FileId)("f1"), entry)
          assert.strictEqual(yield* outbox.size, 1)
        }).pipe(Effect.provide(SqliteOutbox.layerDatabase))
      )
      // Durable across a reopen.
      yield* withStore(
        dir,
        Effect.gen(function* () {
          const items = yield* (yield* AppStateOutbox).take(10)
          assert.deepStrictEqual(
            items.map((i) => [i.fileId, i.entry.state, i.entry.path]),
            [["f1", "complete", "a/b"]]
          )
        }).pipe(Effect.provide(SqliteOutbox.layerDatabase))
      )
    })
  )
})
