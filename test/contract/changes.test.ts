/**
 * GET /files/changes through the client: the first listing in pages, incremental changes,
 * tombstones (deletion and leaving the kind filter), the parent folder's new updated_at,
 * 410 cursor_expired, 422 on an altered cursor, and OAuth only (an API key is refused).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { mustRestartFeed } from "../../src/api/ApiError.ts"
import type { Page } from "../../src/api/paginate.ts"
import type { Cursor } from "../../src/api/schemas/common.ts"
import type { ChangeItem } from "../../src/api/schemas/files.ts"
import { sampleMedia } from "../../src/emulator/media.ts"
import { cursorOf, Emulator, expectReason, failureOf, fid, freshUser, rawCall, withClient } from "./harness.ts"

/** Every page from `cursor` on, and the cursor to resume from. */
const drain = (pages: Stream.Stream<Page<ChangeItem>, unknown>) =>
  Effect.map(Stream.runCollect(pages), (all) => ({
    pages: all,
    items: all.flatMap((p) => p.items),
    cursor: all.at(-1)?.nextCursor ?? null
  }))

const live = (items: ReadonlyArray<ChangeItem>) => items.filter((i) => !i.deleted)
const tombstones = (items: ReadonlyArray<ChangeItem>) => items.filter((i) => i.deleted)

/** Cursors live one minute here, so that expiry by age needs only a small clock step. */
const CURSOR_TTL_MS = 60_000

layer(Emulator.layer({ cursorTtlMs: CURSOR_TTL_MS }))("change feed", (it) => {
  it.effect("first call lists every item of every folder, in pages; the last page's cursor then reports nothing", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const a = e.control.addFolder({ userId: user.userId, name: "A" })
      const b = e.control.addFolder({ userId: user.userId, parentId: a.id, name: "B" })
      const files = [
        e.control.addFile({ userId: user.userId, name: "root.txt" }),
        e.control.addFile({ userId: user.userId, parentId: a.id, name: "in-a.mkv" }),
        e.control.addFile({ userId: user.userId, parentId: b.id, name: "in-b.srt" })
      ]
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const first = yield* drain(c.changes.pages({ limit: 2 }))
          assert.isAbove(first.pages.length, 1)
          assert.deepStrictEqual(
            first.pages.map((p) => p.hasMore),
            [...first.pages.slice(1).map(() => true), false]
          )
          const ids = new Set(first.items.map((i) => i.id))
          assert.deepStrictEqual([...ids].sort(), [a.id, b.id, ...files.map((f) => f.id)].sort())
          assert.isTrue(first.items.every((i) => i.deleted === false))
          const inB = live(first.items).find((i) => i.id === files[2]?.id)
          assert.strictEqual(inB?.parent_id, b.id)
          assert.strictEqual(inB?.kind, "subtitle")
          assert.isNotNull(first.cursor)
          // Nothing changed since: an empty list, and a cursor to keep.
          const again = yield* c.changes.page({ limit: 2 }, first.cursor ?? undefined)
          assert.deepStrictEqual(again.items, [])
          assert.isFalse(again.hasMore)
          assert.isNotNull(again.nextCursor)
        })
      )
    })
  )

  it.effect("later calls return only changes: new, renamed, moved and edited items, and the folders they touched", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const a = e.control.addFolder({ userId: user.userId, name: "A" })
      const z = e.control.addFolder({ userId: user.userId, name: "Z" })
      const stay = e.control.addFile({ userId: user.userId, name: "untouched.txt" })
      const renamed = e.control.addFile({ userId: user.userId, name: "old.txt" })
      const moved = e.control.addFile({ userId: user.userId, parentId: a.id, name: "moving.mkv" })
      const edited = e.control.addFile({ userId: user.userId, name: "growing.log", sizeBytes: 10 })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const start = yield* drain(c.changes.pages({}))
          const folderStamp = live(start.items).find((i) => i.id === z.id)?.updated_at ?? ""
          e.control.rename(renamed.id, "new.txt", user.userId)
          e.control.move(moved.id, z.id, user.userId)
          e.control.edit(edited.id, { sizeBytes: 20, touchContent: true }, user.userId)
          const added = e.control.addFile({ userId: user.userId, parentId: z.id, name: "added.mp3" })
          const next = yield* drain(c.changes.pages({}, start.cursor ?? undefined))
          const changed = live(next.items)
          const byId = new Map<string, (typeof changed)[number]>(changed.map((i) => [i.id, i]))
          assert.strictEqual(byId.get(renamed.id)?.name, "new.txt")
          assert.strictEqual(byId.get(moved.id)?.parent_id, z.id)
          assert.strictEqual(byId.get(added.id)?.name, "added.mp3")
          assert.strictEqual(byId.get(edited.id)?.size_bytes, 20)
          // A full record, as GET /files gives it.
          assert.strictEqual(byId.get(added.id)?.kind, "audio")
          assert.isString(byId.get(added.id)?.mime_type)
          // The folders that gained or lost a child reappear with a new updated_at.
          assert.isTrue(byId.has(a.id))
          assert.isTrue((byId.get(z.id)?.updated_at ?? "") > folderStamp)
          assert.isFalse(byId.has(stay.id))
          assert.deepStrictEqual(tombstones(next.items), [])
        })
      )
    })
  )

  it.effect(
    "include_media and include_poster add the listing's summary media and poster; fetching content is no change",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const user = yield* freshUser
        const video = e.control.addFile({
          userId: user.userId,
          name: "m.mkv",
          sizeBytes: 4_096,
          media: sampleMedia({ title: "M", seed: 1, sizeBytes: 4_096 }),
          poster: { width: 320, height: 180, dominantColor: "#000000" }
        })
        const query = { includeMedia: true, includePoster: true }
        yield* withClient(user.accessToken, (c) =>
          Effect.gen(function* () {
            const start = yield* drain(c.changes.pages(query))
            const [item] = live(start.items)
            assert.strictEqual(item?.media?.title, "M")
            assert.isUndefined(item?.media?.video_streams)
            assert.strictEqual(item?.poster?.width, 320)
            // Downloading the file's bytes changes nothing in the feed.
            const link = yield* c.files.downloadLink(fid(video.id))
            assert.strictEqual((yield* rawCall("GET", link.url)).status, 200)
            const next = yield* c.changes.page(query, start.cursor ?? undefined)
            assert.deepStrictEqual(next.items, [])
          })
        )
      })
  )

  it.effect("deleted items arrive as tombstones with only id, parent_id and deleted=true", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const folder = e.control.addFolder({ userId: user.userId, name: "F" })
      const inside = e.control.addFile({ userId: user.userId, parentId: folder.id, name: "x.mkv" })
      const loose = e.control.addFile({ userId: user.userId, name: "loose.txt" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const start = yield* drain(c.changes.pages({}))
          e.control.remove([inside.id], user.userId)
          // Deleted through the API too (bulk delete).
          const removed = yield* c.files.deleteMany([fid(loose.id)])
          assert.strictEqual(removed[0]?.result, "deleted")
          const next = yield* drain(c.changes.pages({}, start.cursor ?? undefined))
          const dead = tombstones(next.items)
          assert.deepStrictEqual(
            dead.map((t) => ({ ...t })).sort((x, y) => (x.id < y.id ? -1 : 1)),
            [
              { id: inside.id, parent_id: folder.id, deleted: true },
              { id: loose.id, parent_id: null, deleted: true }
            ].sort((x, y) => (x.id < y.id ? -1 : 1))
          )
          // The folder that lost a child is reported live.
          assert.isTrue(live(next.items).some((i) => i.id === folder.id))
        })
      )
    })
  )

  it.effect("with kind: only those kinds are listed; an item leaving the filter arrives as a tombstone", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const video = e.control.addFile({ userId: user.userId, name: "v.mkv" })
      const sub = e.control.addFile({ userId: user.userId, name: "v.srt" })
      e.control.addFile({ userId: user.userId, name: "notes.txt" })
      const query = { kinds: ["video", "subtitle"] }
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const start = yield* drain(c.changes.pages(query))
          assert.deepStrictEqual(start.items.map((i) => i.id).sort(), [video.id, sub.id].sort())
          e.control.edit(video.id, { kind: "other" }, user.userId)
          const next = yield* drain(c.changes.pages(query, start.cursor ?? undefined))
          assert.deepStrictEqual([...next.items], [{ id: video.id, parent_id: null, deleted: true }])
        })
      )
    })
  )

  it.effect("410 cursor_expired: CursorExpired, and the feed restarts without a cursor", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "a.txt" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const start = yield* drain(c.changes.pages({}))
          e.control.expireCursors()
          const error = yield* Effect.flip(c.changes.page({}, start.cursor ?? undefined))
          assert.isTrue(mustRestartFeed(error))
          assert.strictEqual(error.reason._tag, "CursorExpired")
          assert.strictEqual("code" in error.reason ? error.reason.code : undefined, "cursor_expired")
          assert.strictEqual("status" in error.reason ? error.reason.status : undefined, 410)
          const restarted = yield* drain(c.changes.pages({}))
          assert.deepStrictEqual(
            restarted.items.map((i) => i.id),
            [file.id]
          )
        })
      )
    })
  )

  it.effect("a cursor is also expired by age (the emulator's clock moved past its lifetime)", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFile({ userId: user.userId, name: "a.txt" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const start = yield* drain(c.changes.pages({}))
          e.control.advanceClock(CURSOR_TTL_MS + 1_000)
          yield* expectReason(c.changes.page({}, start.cursor ?? undefined), "CursorExpired", 410)
        })
      )
    })
  )

  it.effect("422 on an altered or incomplete cursor: InvalidCursor, which also means restart", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFile({ userId: user.userId, name: "a.txt" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const start = yield* drain(c.changes.pages({}))
          const cursor: Cursor = start.cursor ?? cursorOf("x")
          const flipped = cursor.endsWith("A") ? `${cursor.slice(0, -1)}B` : `${cursor.slice(0, -1)}A`
          for (const bad of [flipped, cursor.slice(0, Math.floor(cursor.length / 2))]) {
            const error = yield* Effect.flip(c.changes.page({}, cursorOf(bad)))
            assert.strictEqual(error.reason._tag, "InvalidCursor")
            assert.strictEqual("status" in error.reason ? error.reason.status : undefined, 422)
            assert.isTrue(mustRestartFeed(error))
          }
          // A cursor sent with other parameters than it was made with is refused too (rule 8).
          yield* expectReason(c.changes.page({ kinds: ["video"] }, cursor), "InvalidCursor", 422)
        })
      )
    })
  )

  it.effect("the change feed is OAuth only: a personal API key is Forbidden", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      const reason = yield* failureOf(withClient(user.apiKey, (c) => c.changes.page({})))
      assert.strictEqual(reason._tag, "Forbidden")
      assert.strictEqual("status" in reason ? reason.status : undefined, 403)
    })
  )

  it.effect("limit bounds are checked before sending (1..100)", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      const refused = yield* expectReason(
        withClient(user.accessToken, (c) => c.changes.page({ limit: 101 })),
        "ClientValidation"
      )
      assert.strictEqual(refused.field, "limit")
    })
  )
})
