import { Schema } from "effect"
import { assert, describe, it } from "vitest"
import { encodeChangeCursor } from "../../src/emulator/routes/changes.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { call, emulator } from "./helpers.ts"
import {
  type Change,
  ChangePage,
  decode,
  decodeStrict,
  ErrorEnvelope,
  FileRecord,
  MediaSummary,
  Single,
  Tombstone
} from "./schemas.ts"

const ChangePageItem = Schema.Struct({ ...FileRecord.fields, deleted: Schema.Literal(false) })
const LinkSchema = Schema.Struct({ url: Schema.String, expires_at: Schema.String })

const page = async (e: RunningEmulator, query: string, cursor?: string) => {
  const q = [query, cursor === undefined ? "" : `cursor=${encodeURIComponent(cursor)}`]
    .filter((s) => s.length > 0)
    .join("&")
  const result = await call(e, "GET", `/files/changes${q.length > 0 ? `?${q}` : ""}`)
  if (result.status !== 200) throw new Error(`changes: ${result.status} ${result.text}`)
  return decode(ChangePage, result.json)
}

/** Follows has_more to the end; returns every change and the cursor to poll with next. */
const drain = async (e: RunningEmulator, query = "", cursor?: string) => {
  const changes: Array<Change> = []
  let next = cursor
  for (let i = 0; i < 10_000; i++) {
    const p = await page(e, query, next)
    changes.push(...p.data)
    next = p.meta.next_cursor
    if (!p.meta.has_more) return { changes, cursor: next }
  }
  throw new Error("feed did not end")
}

const live = (changes: ReadonlyArray<Change>) => changes.filter((c) => !c.deleted)
const idsOf = (changes: ReadonlyArray<Change>) => changes.map((c) => c.id)

describe("GET /files/changes", () => {
  it("rule 1: the first call lists every existing file and folder of all levels, paged by has_more", async () => {
    const e = await emulator({ library: "demo" })
    const gone = e.control.addFile({ name: "gone.txt" })
    e.control.remove([gone.id])
    const first = await page(e, "limit=7")
    assert.strictEqual(first.data.length, 7)
    assert.isTrue(first.meta.has_more)
    const { changes } = await drain(e, "limit=7")
    assert.isTrue(
      changes.every((c) => !c.deleted),
      "no tombstones on a first sync"
    )
    assert.sameMembers(
      idsOf(changes),
      [...e.state.primaryUser.tree.values()].map((item) => item.id)
    )
    assert.notInclude(idsOf(changes), gone.id)
  })

  it("rule 2: later calls return only what changed since the cursor; [] means no change", async () => {
    const e = await emulator({ library: "demo" })
    const { cursor } = await drain(e)
    const idle = await page(e, "", cursor)
    assert.deepStrictEqual(idle.data, [])
    assert.isFalse(idle.meta.has_more)
    const added = e.control.addFile({ name: "new.txt" })
    const after = await drain(e, "", idle.meta.next_cursor)
    assert.deepStrictEqual(idsOf(after.changes), [added.id])
    assert.deepStrictEqual((await page(e, "", after.cursor)).data, [])
  })

  it("rule 3: new, renamed, moved and edited items arrive with deleted=false and the GET /files fields; downloads are no change", async () => {
    const e = await emulator()
    const folder = e.control.addFolder({ name: "F" })
    const a = e.control.addFile({ name: "a.txt", sizeBytes: 3 })
    const b = e.control.addFile({ name: "b.txt" })
    const c = e.control.addFile({ name: "c.txt" })
    const { cursor } = await drain(e)
    const added = e.control.addFile({ name: "d.txt", parentId: folder.id })
    e.control.rename(a.id, "a2.txt")
    e.control.move(b.id, folder.id)
    e.control.edit(c.id, { sizeBytes: 99 })
    const { changes, cursor: next } = await drain(e, "", cursor)
    const items = live(changes)
    assert.includeMembers(idsOf(items), [added.id, a.id, b.id, c.id])
    for (const change of items) {
      const { deleted, ...record } = decodeStrict(ChangePageItem, change)
      assert.isFalse(deleted)
      const detail = decode(Single(FileRecord), (await call(e, "GET", `/files/${change.id}`)).json).data
      assert.deepStrictEqual(record, detail, "same fields and values as GET /files")
    }
    // Fetching bytes over the CDN is not a change.
    const link = await call(e, "POST", `/files/${a.id}/download-link`)
    const url = decode(Single(LinkSchema), link.json).data.url
    assert.strictEqual((await fetch(url)).status, 200)
    assert.deepStrictEqual((await page(e, "", next)).data, [])
  })

  it("rule 4: deleted items arrive with only id, parent_id and deleted=true, descendants included", async () => {
    const e = await emulator()
    const folder = e.control.addFolder({ name: "F" })
    const inner = e.control.addFile({ name: "x.txt", parentId: folder.id })
    const { cursor } = await drain(e)
    e.control.remove([folder.id])
    const { changes } = await drain(e, "", cursor)
    const tombstones = changes.filter((c) => c.deleted)
    for (const t of tombstones) decodeStrict(Tombstone, t)
    assert.deepStrictEqual(
      tombstones.map((t) => [t.id, t.parent_id]),
      [
        [inner.id, folder.id],
        [folder.id, null]
      ]
    )
  })

  it("rule 4: an item that no longer matches the sent kind arrives as a tombstone", async () => {
    const e = await emulator()
    const sub = e.control.addFile({ name: "a.srt" })
    const video = e.control.addFile({ name: "v.mkv" })
    const first = await drain(e, "kind=subtitle,video")
    assert.sameMembers(idsOf(first.changes), [sub.id, video.id])
    e.control.edit(sub.id, { kind: "other" })
    const { changes } = await drain(e, "kind=subtitle,video", first.cursor)
    assert.deepStrictEqual(changes, [{ id: sub.id, parent_id: null, deleted: true }])
  })

  it("rule 5: a folder reappears with a new updated_at when a file is added to or removed from it", async () => {
    const e = await emulator()
    const folder = e.control.addFolder({ name: "F" })
    const other = e.control.addFolder({ name: "G" })
    const file = e.control.addFile({ name: "a.txt", parentId: folder.id })
    const first = await drain(e)
    const stamp = (changes: ReadonlyArray<Change>, id: string) => {
      const change = live(changes).find((c) => c.id === id)
      return change && !change.deleted ? change.updated_at : undefined
    }
    const before = stamp(first.changes, folder.id) ?? ""

    e.control.addFile({ name: "b.txt", parentId: folder.id })
    const afterAdd = await drain(e, "", first.cursor)
    const added = stamp(afterAdd.changes, folder.id) ?? ""
    assert.isAbove(added.localeCompare(before), 0, "new updated_at after an add")

    e.control.remove([file.id])
    const afterRemove = await drain(e, "", afterAdd.cursor)
    assert.isAbove(
      (stamp(afterRemove.changes, folder.id) ?? "").localeCompare(added),
      0,
      "new updated_at after a removal"
    )

    const moved = e.control.addFile({ name: "m.txt", parentId: folder.id })
    const beforeMove = await drain(e, "", afterRemove.cursor)
    e.control.move(moved.id, other.id)
    const afterMove = await drain(e, "", beforeMove.cursor)
    assert.includeMembers(idsOf(afterMove.changes), [moved.id, folder.id, other.id], "a move touches both folders")
  })

  it("rule 6: an item changed while a client pages appears again, and nothing is skipped", async () => {
    const e = await emulator()
    const files = Array.from({ length: 10 }, (_, i) => e.control.addFile({ name: `f${i}.txt` }))
    const first = await page(e, "limit=4")
    const seen = idsOf(first.data)
    const early = files[0]!
    assert.include(seen, early.id)
    e.control.rename(early.id, "renamed.txt")
    const rest = await drain(e, "limit=4", first.meta.next_cursor)
    const all = [...seen, ...idsOf(rest.changes)]
    assert.strictEqual(all.filter((id) => id === early.id).length, 2, "the renamed item repeats")
    assert.sameMembers(
      [...new Set(all)],
      files.map((f) => f.id)
    )
    const repeated = live(rest.changes).find((c) => c.id === early.id)
    assert.strictEqual(repeated && !repeated.deleted ? repeated.name : undefined, "renamed.txt")
  })

  it("rule 7: an expired cursor gives 410 cursor_expired (control API or age)", async () => {
    const e = await emulator({ cursorTtlMs: 60_000 })
    const { cursor } = await drain(e)
    e.control.expireCursors()
    const expired = await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(cursor)}`)
    assert.strictEqual(expired.status, 410)
    assert.strictEqual(decode(ErrorEnvelope, expired.json).error.code, "cursor_expired")
    const fresh = (await drain(e)).cursor
    assert.strictEqual((await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(fresh)}`)).status, 200)
    e.control.advanceClock(60_001)
    assert.strictEqual((await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(fresh)}`)).status, 410)
  })

  it("rule 7: an altered or incomplete cursor gives 422 naming the cursor", async () => {
    const e = await emulator()
    e.control.addFile({ name: "a.txt" })
    const { cursor } = await drain(e)
    const flipped = cursor.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"))
    for (const bad of [flipped, cursor.slice(0, -5), cursor.split(".")[0] ?? "", "garbage"]) {
      const result = await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(bad)}`)
      assert.strictEqual(result.status, 422, bad)
      const error = decode(ErrorEnvelope, result.json).error
      assert.strictEqual(error.code, "validation_failed")
      assert.property(error.details?.fields, "cursor")
    }
    const other = e.control.addUser()
    const foreign = await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(cursor)}`, {
      token: other.accessToken
    })
    assert.strictEqual(foreign.status, 422, "a cursor belongs to its user")
  })

  it("rule 8: a cursor is bound to kind, include_media and include_poster", async () => {
    const e = await emulator()
    e.control.addFile({ name: "v.mkv" })
    const { cursor } = await drain(e, "kind=video&include_media=true")
    assert.strictEqual(
      (await call(e, "GET", `/files/changes?kind=video&include_media=true&cursor=${encodeURIComponent(cursor)}`))
        .status,
      200
    )
    for (const query of [
      "",
      "kind=video",
      "include_media=true",
      "kind=video&include_media=true&include_poster=true",
      "kind=audio&include_media=true"
    ]) {
      const result = await call(e, "GET", `/files/changes?${query}&cursor=${encodeURIComponent(cursor)}`)
      assert.strictEqual(result.status, 422, query)
    }
    // Order of kinds does not matter.
    const both = await drain(e, "kind=video,audio")
    assert.strictEqual(
      (await call(e, "GET", `/files/changes?kind=audio,video&cursor=${encodeURIComponent(both.cursor)}`)).status,
      200
    )
  })

  it("include_media carries the listing summary; limit is 1..100 (default 100)", async () => {
    const e = await emulator({ library: "files=150,depth=1" })
    const first = await page(e, "include_media=true")
    assert.strictEqual(first.data.length, 100)
    const video = first.data.find((c) => !c.deleted && c.kind === "video")
    assert.isDefined(video)
    if (video && !video.deleted) decode(MediaSummary, video.media)
    for (const bad of ["0", "101"])
      assert.strictEqual((await call(e, "GET", `/files/changes?limit=${bad}`)).status, 422)
  })

  // Its cost (O(changes), not O(items)) is measured by bench/index.ts, not asserted here.
  it("an idle poll against 100,000 items is empty, and the next one carries exactly the new item", async () => {
    const e = await emulator({ library: "files=100000,depth=4" })
    const tree = e.state.primaryUser.tree
    assert.isAbove(tree.size, 100_000)
    // The cursor a client holds once it has paged to the end.
    const cursor = encodeChangeCursor(e.context, e.state.primaryUser.id, {
      after: tree.seq,
      tombstonesAfter: 0,
      k: null,
      m: false,
      p: false
    })
    assert.deepStrictEqual((await page(e, "", cursor)).data, [])
    const added = e.control.addFile({ name: "late.txt" })
    assert.deepStrictEqual(idsOf((await page(e, "", cursor)).data), [added.id])
  })
})
