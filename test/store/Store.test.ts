import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Exit, Option } from "effect"
import { TestClock } from "effect/testing"
import { remove, upsert } from "../../src/domain/RemoteItem.ts"
import { DATABASE_FILE, Database } from "../../src/store/Database.ts"
import { SCHEMA_VERSION } from "../../src/store/migrations.ts"
import { type FeedParams, Store } from "../../src/store/Store.ts"
import { entryOf, fid, file, folder } from "../sync/fixtures.ts"
import { tempDir, withStore } from "./helpers.ts"

const CHANGES: FeedParams = { mode: "changes", kind: null, includeMedia: false, includePoster: false }

const ids = (items: ReadonlyArray<{ readonly id: string }>) => items.map((i) => i.id)

describe("Database", () => {
  it.effect("creates a migrated, STRICT, WAL database readable only by its owner", () =>
    Effect.gen(function* () {
      const dir = Path.join(tempDir(), "state")
      yield* withStore(
        dir,
        Effect.gen(function* () {
          const { db } = yield* Database
          assert.strictEqual(db.pragma("user_version", { simple: true }), SCHEMA_VERSION)
          assert.strictEqual(db.pragma("journal_mode", { simple: true }), "wal")
          const loose = db
            .prepare(
              "SELECT name FROM pragma_table_list WHERE schema = 'main' AND strict = 0 AND name NOT LIKE 'sqlite_%'"
            )
            .all()
          assert.deepStrictEqual(loose, [], "every table is STRICT")
          const store = yield* Store
          yield* store.events.append({ level: "info", kind: "test", message: "m", path: null, remoteId: null })
          for (const f of [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`]) {
            assert.strictEqual(Fs.statSync(Path.join(dir, f)).mode & 0o777, 0o600, f)
          }
          assert.strictEqual(Fs.statSync(dir).mode & 0o777, 0o700)
        })
      )
    })
  )

  it.live(
    "processes opening a fresh state dir at once all get the migrated database (status beside a starting run)",
    () =>
      Effect.gen(function* () {
        const dir = Path.join(tempDir(), "state")
        const database = Path.resolve(import.meta.dirname, "../../src/store/Database.ts")
        // Each child loads first, then all open at the same instant.
        const openAt = Date.now() + 3_000
        const opener = `
        import { Effect } from "effect"
        import { openDatabase } from ${JSON.stringify(database)}
        while (Date.now() < ${openAt}) {}
        const { db } = await Effect.runPromise(openDatabase(${JSON.stringify(dir)}))
        console.log(db.pragma("user_version", { simple: true }), db.pragma("journal_mode", { simple: true }))`
        const exits = yield* Effect.promise(() =>
          Promise.all(
            Array.from(
              { length: 6 },
              () =>
                new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
                  const child = ChildProcess.spawn(process.execPath, ["--input-type=module", "-e", opener], {
                    cwd: Path.resolve(import.meta.dirname, "../..")
                  })
                  let out = ""
                  let err = ""
                  child.stdout.on("data", (d) => (out += d))
                  child.stderr.on("data", (d) => (err += d))
                  child.on("close", (code) => resolve({ code, out, err }))
                })
            )
          )
        )
        for (const exit of exits) {
          assert.strictEqual(exit.code, 0, exit.err)
          assert.strictEqual(exit.out.trim(), `${SCHEMA_VERSION} wal`)
        }
      })
  )

  it.effect("refuses a database written by a newer dlsync and leaves it untouched", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = Path.join(dir, DATABASE_FILE)
      const db = new BetterSqlite3(path)
      db.exec("CREATE TABLE future (x INTEGER) STRICT")
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`)
      db.close()
      const before = Fs.readFileSync(path)
      const error = yield* Effect.flip(
        withStore(
          dir,
          Store.use(() => Effect.void)
        )
      )
      assert.strictEqual(error._tag, "SchemaTooNew")
      assert.include(error.message, `schema version ${SCHEMA_VERSION + 1}`)
      assert.include(error.message, "newer dlsync")
      assert.deepStrictEqual(Fs.readFileSync(path), before)
    })
  )

  it.effect("reopens an existing database without re-running migrations", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      yield* withStore(
        dir,
        Store.use((s) => s.feed.applyPage({ changes: [upsert(file("f1", "a"))], nextCursor: "c1", hasMore: true }))
      )
      const state = yield* withStore(
        dir,
        Store.use((s) => s.feed.state)
      )
      assert.strictEqual(state.cursor, "c1")
    })
  )

  it.effect("names the path when the state dir cannot be used", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const blocker = Path.join(dir, "file")
      Fs.writeFileSync(blocker, "")
      const error = yield* Effect.flip(
        withStore(
          Path.join(blocker, "state"),
          Store.use(() => Effect.void)
        )
      )
      assert.strictEqual(error._tag, "StoreOpenError")
      assert.include(error.message, blocker)
    })
  )
})

describe("Store.feed", () => {
  it.effect("starts with a first listing and completes it on the last page", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        const initial = yield* store.feed.begin(CHANGES, "OAuth token")
        assert.deepStrictEqual(initial.rebuild, { generation: 1, reason: "first listing" })
        assert.isFalse(initial.listingComplete)
        yield* store.feed.applyPage({ changes: [upsert(folder("d", "D"))], nextCursor: "p1", hasMore: true })
        assert.isFalse((yield* store.feed.state).listingComplete)
        const out = yield* store.feed.applyPage({
          changes: [upsert(file("f", "x", "d"))],
          nextCursor: "live",
          hasMore: false
        })
        assert.strictEqual(out.completedGeneration, 1)
        const state = yield* store.feed.state
        assert.isTrue(state.listingComplete)
        assert.strictEqual(state.cursor, "live")
        assert.strictEqual(state.generation, 1)
        assert.deepStrictEqual(ids(yield* store.remote.all), ["d", "f"])
      })
    )
  )

  it.effect("re-applying a page is harmless; the last record for an id wins; deletes apply", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        const page = {
          changes: [
            upsert(file("a", "one")),
            upsert(file("b", "b")),
            upsert(file("a", "two")),
            remove(fid("b")),
            remove(fid("zz"))
          ],
          nextCursor: "c2",
          hasMore: true
        }
        yield* store.feed.applyPage(page)
        const once = yield* store.remote.all
        yield* store.feed.applyPage(page)
        assert.deepStrictEqual(yield* store.remote.all, once)
        assert.deepStrictEqual(
          once.map((i) => i.name),
          ["two"]
        )
      })
    )
  )

  it.effect("commits a page and its cursor together or not at all", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.feed.applyPage({ changes: [upsert(file("a", "a"))], nextCursor: "c1", hasMore: true })
        // size -1 passes the TypeScript type but breaks the table's CHECK: the whole page must roll back.
        const exit = yield* Effect.exit(
          store.feed.applyPage({
            changes: [upsert(file("b", "b")), upsert(file("c", "c", null, { size: -1 }))],
            nextCursor: "c2",
            hasMore: true
          })
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.strictEqual((yield* store.feed.state).cursor, "c1")
        assert.deepStrictEqual(ids(yield* store.remote.all), ["a"])
      })
    )
  )

  it.effect(
    "a rebuild removes what the completed listing lacked, only when it completes, and resumes after a crash",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const run = <A>(f: (s: Store["Service"]) => Effect.Effect<A>) => withStore(dir, Store.use(f))
        yield* run((s) =>
          s.feed.applyPage({
            changes: [upsert(file("keep", "k")), upsert(file("gone", "g"))],
            nextCursor: "live1",
            hasMore: false
          })
        )
        yield* run((s) => s.feed.rebuild("cursor_expired"))
        yield* run((s) => s.feed.applyPage({ changes: [upsert(file("keep", "k2"))], nextCursor: "L1", hasMore: true }))
        // "Crash": a new connection sees the rebuild under way, its cursor, and the old item still there.
        const mid = yield* run((s) => s.feed.state)
        assert.deepStrictEqual(mid.rebuild, { generation: 2, reason: "cursor_expired" })
        assert.strictEqual(mid.cursor, "L1")
        assert.isFalse(mid.listingComplete)
        assert.deepStrictEqual(ids(yield* run((s) => s.remote.all)), ["gone", "keep"])
        const out = yield* run((s) =>
          s.feed.applyPage({ changes: [upsert(file("new", "n"))], nextCursor: "live2", hasMore: false })
        )
        assert.deepStrictEqual(out, { upserted: 1, deleted: 0, completedGeneration: 2, removedUnlisted: 1 })
        assert.deepStrictEqual(ids(yield* run((s) => s.remote.all)), ["keep", "new"])
        const events = yield* run((s) => s.events.recent(10))
        assert.include(events.map((e) => e.kind).join(","), "listing_complete")
      })
  )

  it.effect("a rebuild restarted midway does not keep items only its abandoned attempt saw", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.feed.applyPage({ changes: [upsert(file("x", "x"))], nextCursor: "L", hasMore: true })
        // The first listing expires midway and restarts; x was deleted meanwhile.
        const restarted = yield* store.feed.rebuild("cursor_expired mid-listing")
        assert.strictEqual(restarted.rebuild?.generation, 2)
        assert.strictEqual(restarted.cursor, null)
        yield* store.feed.applyPage({ changes: [upsert(file("y", "y"))], nextCursor: "live", hasMore: false })
        assert.deepStrictEqual(ids(yield* store.remote.all), ["y"])
      })
    )
  )

  it.effect("other query parameters than the cursor's restart the feed; the same keep it", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.feed.begin(CHANGES, "OAuth")
        yield* store.feed.applyPage({ changes: [upsert(file("a", "a"))], nextCursor: "live", hasMore: false })
        const same = yield* store.feed.begin(CHANGES, "OAuth")
        assert.strictEqual(same.cursor, "live")
        assert.isTrue(same.listingComplete)
        const changed = yield* store.feed.begin({ ...CHANGES, includeMedia: true }, "OAuth")
        assert.strictEqual(changed.cursor, null)
        assert.isFalse(changed.listingComplete)
        assert.include(changed.rebuild?.reason ?? "", "include_media false → true")
        yield* store.feed.applyPage({ changes: [], nextCursor: "L1", hasMore: true })
        const listing = yield* store.feed.begin({ ...CHANGES, includeMedia: true, mode: "listing" }, "API key")
        assert.strictEqual(listing.params.mode, "listing")
        assert.strictEqual(listing.modeReason, "API key")
        assert.strictEqual(listing.rebuild?.generation, 3)
        assert.strictEqual(listing.cursor, null)
      })
    )
  )

  it.effect("a first run in listing mode keeps its first listing", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        const state = yield* store.feed.begin({ ...CHANGES, mode: "listing" }, "personal API key")
        assert.deepStrictEqual(state.rebuild, { generation: 1, reason: "first listing" })
        assert.strictEqual(state.params.mode, "listing")
      })
    )
  )

  it.effect("tracks the highest updated_at as the watermark", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.feed.applyPage({
          changes: [
            upsert(file("a", "a", null, { updatedAt: "2026-03-01T00:00:00Z" })),
            upsert(file("b", "b", null, { updatedAt: "2026-02-01T00:00:00Z" }))
          ],
          nextCursor: null,
          hasMore: true
        })
        assert.strictEqual((yield* store.feed.state).watermark, "2026-03-01T00:00:00Z")
      })
    )
  )
})

describe("Store.local", () => {
  it.effect("keeps one entry per remote id, with nanosecond mtimes and 64-bit inodes intact", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        const f = file("f", "movie.mkv")
        const entry = {
          ...entryOf(f, "A/movie.mkv"),
          written: { size: 100, mtimeNs: 1_763_770_000_123_456_789n, ino: 18_446_744_073_709_551_557n }
        }
        yield* store.local.put(entry)
        assert.deepStrictEqual(yield* store.local.byPath("A/movie.mkv"), Option.some(entry))
        yield* store.local.put({ ...entry, path: "B/movie.mkv" })
        assert.deepStrictEqual(
          (yield* store.local.all).map((e) => e.path),
          ["B/movie.mkv"]
        )
        assert.isTrue(Option.isSome(yield* store.local.byRemoteId(fid("f"))))
      })
    )
  )

  it.effect("reads back every field it wrote: items, entries never written, pending ops, events", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.feed.begin(CHANGES, "test")
        const item = file("f", "movie.mkv", "d", { locked: true, expiresAt: "2026-03-01T00:00:00Z", size: 7 })
        yield* store.feed.applyPage({ changes: [upsert(item)], nextCursor: "c1", hasMore: false })
        assert.deepStrictEqual(yield* store.remote.get(fid("f")), Option.some(item))
        const pending = { ...entryOf(item, "A/movie.mkv"), written: null, state: "failed" as const, attempts: 2 }
        yield* store.local.put({ ...pending, lastError: "HTTP 503" })
        assert.deepStrictEqual(yield* store.local.all, [{ ...pending, lastError: "HTTP 503" }])
        const op = {
          op: "conflict_copy" as const,
          remoteId: fid("f"),
          from: "A/movie.mkv",
          to: "A/movie (1).mkv",
          ino: 9n
        }
        yield* store.pendingOp.begin(op)
        assert.deepStrictEqual(yield* store.pendingOp.get, Option.some(op))
        const event = { level: "error" as const, kind: "k", message: "m", path: "A", remoteId: "f" }
        yield* store.events.append(event)
        const [recorded] = yield* store.events.recent(1)
        assert.deepStrictEqual({ ...recorded, seq: 0, at: "" }, { ...event, seq: 0, at: "" })
      })
    )
  )

  it.effect("moves a folder entry with everything below it, and nothing beside it", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.local.put(entryOf(folder("d", "A"), "A"))
        yield* store.local.put(entryOf(file("f1", "x"), "A/x"))
        yield* store.local.put(entryOf(file("f2", "y"), "A/sub/y"))
        yield* store.local.put(entryOf(file("f3", "z"), "AB/z"))
        yield* store.local.put(entryOf(file("f4", "w"), "A_/w"))
        yield* store.local.move("A", "C/A")
        assert.deepStrictEqual(
          (yield* store.local.all).map((e) => e.path),
          ["AB/z", "A_/w", "C/A", "C/A/sub/y", "C/A/x"]
        )
      })
    )
  )

  it.effect("remembers user deletions until restored", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.local.put(entryOf(file("f", "x"), "A/x"))
        yield* store.local.markDeleted({ remoteId: fid("f"), path: "A/x" })
        assert.deepStrictEqual(yield* store.local.all, [])
        assert.deepStrictEqual(yield* store.local.locallyDeleted, [{ remoteId: fid("f"), path: "A/x" }])
        assert.strictEqual(yield* store.local.restore("A"), 1)
        assert.deepStrictEqual(yield* store.local.locallyDeleted, [])
      })
    )
  )

  it.effect("replaces the held big delete as a whole", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.held.replace(["a", "b"])
        yield* store.held.replace(["c"])
        assert.deepStrictEqual(
          (yield* store.held.list).map((h) => h.path),
          ["c"]
        )
        yield* store.held.replace([])
        assert.deepStrictEqual(yield* store.held.list, [])
      })
    )
  )

  it.effect("a path still held keeps the time it was first held (a confirmation of what was seen stays valid)", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.held.replace(["a", "b"])
        const first = yield* store.held.list
        yield* TestClock.adjust("1 minute")
        yield* store.held.replace(["a", "b", "c"])
        const again = yield* store.held.list
        assert.deepStrictEqual(again.slice(0, 2), first)
        assert.notStrictEqual(again[2]?.heldAt, first[0]?.heldAt, "c is held from now")
      })
    )
  )
})
