/**
 * inOneCommit: the store writes of an effect become durable together, at its end, whether it
 * succeeds or fails; a second connection (another process) sees none of them before.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Layer } from "effect"
import { FileId } from "../../src/domain/FileId.ts"
import { Database } from "../../src/store/Database.ts"
import { inOneCommit } from "../../src/store/oneCommit.ts"
import { Store } from "../../src/store/Store.ts"

const entry = (n: number) => ({
  path: `f${n}`,
  remoteId: FileId.make(`id${n}`),
  type: "file" as const,
  written: null,
  remote: { size: n, updatedAt: "2025-01-01T00:00:00Z", name: `f${n}`, parentId: null },
  state: "pending" as const,
  attempts: 0,
  lastError: null
})

describe("inOneCommit", () => {
  it.effect("commits every write at the end, the failing effect's too, and nests", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-one-commit-"))
    const layer = Store.layer.pipe(Layer.provideMerge(Database.layer(dir)))
    const other = () => new BetterSqlite3(Path.join(dir, "state.db"), { readonly: true })
    const count = () => {
      const db = other()
      try {
        return Number(db.prepare("SELECT count(*) AS n FROM local_entries").pluck().get())
      } finally {
        db.close()
      }
    }
    return Effect.gen(function* () {
      const store = yield* Store
      const seen: Array<number> = []
      yield* inOneCommit(
        Effect.gen(function* () {
          yield* store.local.put(entry(1))
          yield* inOneCommit(store.local.put(entry(2)))
          seen.push(count())
        })
      )
      seen.push(count())
      const failed = yield* Effect.flip(inOneCommit(Effect.andThen(store.local.put(entry(3)), Effect.fail("stopped"))))
      seen.push(count())
      assert.deepStrictEqual(seen, [0, 2, 3], "nothing visible before the end; everything after, failure or not")
      assert.strictEqual(failed, "stopped")
    }).pipe(Effect.provide(layer), Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))))
  })
})
