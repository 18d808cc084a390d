import { assert, describe, it } from "vitest"
import { formatMicros, makeClock, parseRfc3339Micros } from "../../src/emulator/clock.ts"
import { TreeError } from "../../src/emulator/item.ts"
import { EmulatorState } from "../../src/emulator/state.ts"
import { FileTree } from "../../src/emulator/tree.ts"
import { call, emulator } from "./helpers.ts"
import { ChangePage, decode } from "./schemas.ts"

const makeTree = () => {
  const clock = makeClock()
  let n = 0
  const removed: Array<string> = []
  const tree = new FileTree(
    clock,
    () => `id${String(++n).padStart(4, "0")}`,
    (ids) => removed.push(...ids)
  )
  const file = (name: string, parentId: string | null = null, extra: { expiresAt?: number; locked?: boolean } = {}) =>
    tree.add({ type: "file", parentId, name, kind: "other", mimeType: "application/octet-stream", ...extra })
  const folder = (name: string, parentId: string | null = null) =>
    tree.add({ type: "folder", parentId, name, kind: "folder", mimeType: "" })
  return { tree, clock, removed, file, folder }
}

describe("FileTree", () => {
  it("gives every change a strictly increasing seq and updated_at", () => {
    const { tree, file } = makeTree()
    const a = file("a")
    const first = { seq: a.seq, at: a.updatedAt }
    tree.update(a.id, { name: "b" })
    assert.isAbove(a.seq, first.seq)
    assert.isAbove(a.updatedAt, first.at)
  })

  it("refuses moves into a descendant, into a file, and unknown ids", () => {
    const { tree, file, folder } = makeTree()
    const outer = folder("outer")
    const inner = folder("inner", outer.id)
    const f = file("f")
    assert.throws(() => tree.move(outer.id, inner.id), TreeError)
    assert.throws(() => tree.move(outer.id, outer.id), TreeError)
    assert.throws(() => tree.move(inner.id, f.id), TreeError)
    assert.throws(() => tree.update("nope", { name: "x" }), TreeError)
    assert.throws(() => file("x", "nope"), TreeError)
  })

  it("keeps the change feed correct across log compaction (many edits of few items)", () => {
    const { tree, file } = makeTree()
    const items = Array.from({ length: 5 }, (_, i) => file(`f${i}`))
    const mid = tree.seq
    for (let round = 0; round < 2000; round++) tree.update(items[round % 5]!.id, { name: `r${round}` })
    const page = tree.changesAfter(mid, 100, mid)
    assert.sameMembers(
      page.changes.map((c) => (c.deleted ? c.tombstone.id : c.item.id)),
      items.map((i) => i.id)
    )
    assert.isFalse(page.hasMore)
    assert.strictEqual(page.nextAfter, tree.seq)
    assert.deepStrictEqual(tree.changesAfter(tree.seq, 100, 0).changes, [])
  })

  it("expiry cleanup removes due items with their descendants, locked or not, and tells the listeners", () => {
    const { tree, clock, removed, file, folder } = makeTree()
    const now = clock.nowMs() * 1000
    const keep = file("keep")
    const dir = folder("dir")
    const inside = file("inside", dir.id, { locked: true })
    tree.update(dir.id, { expiresAt: now + 1_000_000 })
    assert.deepStrictEqual(tree.expireDue(now), [])
    assert.sameMembers([...tree.expireDue(now + 1_000_000)], [dir.id, inside.id])
    assert.sameMembers(removed, [dir.id, inside.id])
    assert.isDefined(tree.get(keep.id))
    assert.isUndefined(tree.get(inside.id))
  })
})

describe("EmulatorState hooks", () => {
  it("addDownloadedFiles creates missing folders under `directory`, reuses existing ones, tags the download", () => {
    const state = new EmulatorState()
    const user = state.primaryUser
    const movies = user.tree.add({ type: "folder", parentId: null, name: "Movies", kind: "folder", mimeType: "" })
    const files = state.addDownloadedFiles(user.id, {
      directory: "/Movies//New/",
      downloadId: "dl_1",
      files: [
        { path: "a.mkv", sizeBytes: 10 },
        { path: "Subs/a.en.srt", sizeBytes: 2 }
      ]
    })
    const [video, subtitle] = files
    assert.strictEqual(video?.kind, "video")
    assert.strictEqual(subtitle?.kind, "subtitle")
    assert.deepStrictEqual(user.tree.pathOf(video?.id ?? ""), ["Movies", "New", "a.mkv"])
    assert.deepStrictEqual(user.tree.pathOf(subtitle?.id ?? ""), ["Movies", "New", "Subs", "a.en.srt"])
    assert.strictEqual(user.tree.childIds(null).size, 1, "Movies was reused")
    assert.sameMembers([...user.tree.downloadItemIds("dl_1")], [video?.id, subtitle?.id])
    assert.isDefined(state.liveItem(user.id, movies.id))
    assert.isUndefined(state.liveItem(state.addUser().id, movies.id), "other users do not see it")
  })
})

describe("item expiry over HTTP", () => {
  it("an item whose expires_at passes disappears, with a tombstone in the change feed", async () => {
    const e = await emulator({ control: true })
    const soon = new Date(Date.now() + 60_000).toISOString()
    const created = await call(e, "POST", "/_control/files", { body: { name: "short-lived.txt", expires_at: soon } })
    assert.strictEqual(created.status, 201)
    const cursor = decode(ChangePage, (await call(e, "GET", "/files/changes")).json).meta.next_cursor
    e.control.advanceClock(61_000)
    const changes = decode(
      ChangePage,
      (await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(cursor)}`)).json
    ).data
    assert.strictEqual(changes.length, 1)
    assert.isTrue(changes[0]?.deleted)
    assert.strictEqual((await call(e, "GET", "/files")).text.includes("short-lived"), false)
  })
})

describe("timestamps", () => {
  it("format microseconds as RFC 3339 with six fraction digits and parse back", () => {
    assert.strictEqual(formatMicros(0), "1970-01-01T00:00:00.000000Z")
    assert.strictEqual(formatMicros(1_795_323_914_123_456), "2026-11-22T05:05:14.123456Z")
    assert.strictEqual(formatMicros(1_795_323_914_000_001), "2026-11-22T05:05:14.000001Z")
    for (const micros of [0, 1, 999_999, 1_795_323_914_123_456]) {
      assert.strictEqual(parseRfc3339Micros(formatMicros(micros)), micros)
    }
    assert.strictEqual(parseRfc3339Micros("2026-11-22T06:05:14.5+01:00"), 1_795_323_914_500_000)
    assert.isUndefined(parseRfc3339Micros("2026-11-22T04:25:14"), "a time zone is required")
    assert.isUndefined(parseRfc3339Micros("2026-11-22"))
  })
})
