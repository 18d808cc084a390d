/**
 * A process that enqueues final app-state entries into a SQLite outbox, prints `enqueued`,
 * and then waits to be SIGKILLed. Argument: JSON `{ db, fileIds }`.
 */
import BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"
import { FileId } from "../../../src/api/schemas/common.ts"
import { makeSqliteOutbox } from "../../../src/appstate/outboxSqlite.ts"
import { progressEntry } from "../../../src/appstate/ProgressEntry.ts"

const args = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Struct({ db: Schema.String, fileIds: Schema.Array(FileId) }))
)(process.argv[2] ?? "")

const db = new BetterSqlite3(args.db)
db.pragma("journal_mode = WAL")
db.pragma("synchronous = FULL")
const outbox = makeSqliteOutbox(db)

Effect.runSync(
  Effect.forEach(args.fileIds, (id, i) =>
    outbox.enqueue(
      id,
      progressEntry({ state: "complete", bytes: 100, size: 100, path: `f${i}.mkv`, updatedAtMs: 1_700_000_000_000 + i })
    )
  )
)
process.stdout.write("enqueued\n")
// Stay alive (with the database open) until killed.
setInterval(() => {}, 60_000)
