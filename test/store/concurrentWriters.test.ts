/**
 * Another process writing the same state database (a `dlsync add` beside the running daemon)
 * must never make one of the store's transactions fail. A transaction that reads before it
 * writes (BEGIN DEFERRED) is refused at once with "database is locked" when another
 * connection commits between its read and its first write: SQLite cannot upgrade a stale
 * snapshot and calls no busy handler. Every write transaction takes the write lock first.
 */
import * as ChildProcess from "node:child_process"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { DATABASE_FILE } from "../../src/store/Database.ts"
import { Store } from "../../src/store/Store.ts"
import { TransferJournal } from "../../src/transfer/TransferJournal.ts"
import { entryOf, fid, file } from "../sync/fixtures.ts"
import { tempDir, withStore } from "./helpers.ts"

/** A process committing one small write after another into the database until killed. */
const startWriter = (databasePath: string) =>
  Effect.callback<ChildProcess.ChildProcess>((resume) => {
    const script = `
      const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))})
      const db = new Database(${JSON.stringify(databasePath)})
      db.pragma("busy_timeout = 5000")
      db.exec("CREATE TABLE IF NOT EXISTS noise (n INTEGER) STRICT")
      const insert = db.prepare("INSERT INTO noise (n) VALUES (?)")
      process.stdout.write("ready\\n")
      for (let n = 0; ; n++) insert.run(n)
    `
    const child = ChildProcess.spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", () => resume(Effect.succeed(child)))
    child.once("exit", (code) => resume(Effect.die(new Error(`the writer exited with ${code}`))))
  })

const ROUNDS = 400

describe("the store beside another writing process", () => {
  it.effect(
    "commits every read-then-write transaction while another process commits in a loop",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        yield* withStore(
          dir,
          Effect.scoped(
            Effect.gen(function* () {
              const store = yield* Store
              const journal = yield* TransferJournal
              const writer = yield* Effect.acquireRelease(startWriter(Path.join(dir, DATABASE_FILE)), (child) =>
                Effect.sync(() => child.kill("SIGKILL"))
              )
              assert.strictEqual(writer.exitCode, null)
              const movie = file("f1", "Movie.mkv")
              for (let round = 0; round < ROUNDS; round++) {
                // A put that finds the entry at another path drops that row first: read, then write.
                yield* store.local.put(entryOf(movie, round % 2 === 0 ? "a/Movie.mkv" : "b/Movie.mkv"))
                yield* store.local.move(round % 2 === 0 ? "a" : "b", round % 2 === 0 ? "c" : "d")
                yield* store.local.markDeleted({ remoteId: fid("f1"), path: "c/Movie.mkv" })
                yield* journal.save({
                  fileId: "f2",
                  size: 10,
                  etag: null,
                  lastModified: null,
                  partialPath: "x.part",
                  attempts: 0,
                  lastError: null,
                  segments: [{ start: 0, end: 10, durable: round % 10 }]
                })
              }
              assert.deepStrictEqual(yield* store.local.locallyDeleted, [{ remoteId: fid("f1"), path: "c/Movie.mkv" }])
              assert.strictEqual(
                (yield* journal.load("f2")).pipe(
                  Option.map((r) => r.segments[0]?.durable),
                  Option.getOrNull
                ),
                (ROUNDS - 1) % 10
              )
            })
          )
        )
      }),
    60_000
  )
})
