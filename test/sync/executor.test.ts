/**
 * A pass end to end on real disk: scan → plan → execute, with the real Store (SQLite in a
 * temp state dir), the real LocalOps (a temp root) and a transfer step that lands files at
 * once through localOps `land` (the transfer engine's landing), with the remote updated_at as mtime, as the transfer engine does.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, PubSub } from "effect"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { upsert } from "../../src/domain/RemoteItem.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Store } from "../../src/store/Store.ts"
import {
  type DownloadAction,
  executePlan,
  recordFailed,
  recordLanded,
  recoverInterrupted
} from "../../src/sync/executor.ts"
import { LocalOps, land } from "../../src/sync/localOps.ts"
import { scanLocal } from "../../src/sync/localScan.ts"
import { runPass } from "../../src/sync/pass.ts"
import { type PlanConfig, plan } from "../../src/sync/planner.ts"
import { storeLayer } from "../store/helpers.ts"
import { fid, file, folder } from "./fixtures.ts"
import { CONFIG } from "./planner.fixtures.ts"

const NOW = new Date("2026-11-22T05:00:00Z")

const setup = () => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-exec-root-"))
  const state = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-exec-state-"))
  const downloads: Array<string> = []
  /** The transfer step, as the engine does it: the file landed through `land`, then recorded. */
  const transfer = (actions: ReadonlyArray<DownloadAction>) =>
    Effect.forEach(actions, (action) =>
      Effect.gen(function* () {
        downloads.push(action.path)
        const partial = Path.join(root, ".dlsync", "partial", action.item.id)
        Fs.mkdirSync(Path.dirname(partial), { recursive: true })
        Fs.writeFileSync(partial, "x".repeat(action.item.size))
        const mtime = new Date(action.item.updatedAt)
        Fs.utimesSync(partial, mtime, mtime)
        const landed = yield* Effect.result(land(root, partial, action.path, action.replace))
        if (landed._tag === "Success") yield* recordLanded(action, landed.success)
        else yield* recordFailed(action, landed.failure.message)
      })
    )
  const layer = Layer.mergeAll(storeLayer(state), LocalOps.layer(root), MirrorEvents.layer)
  /** The remote becomes `remote` (a complete listing), then one pass runs. */
  const pass = (remote: ReadonlyArray<RemoteItem>, config: PlanConfig = CONFIG) =>
    Effect.gen(function* () {
      const store = yield* Store
      yield* store.feed.rebuild("test listing")
      yield* store.feed.applyPage({ changes: remote.map(upsert), nextCursor: null, hasMore: false })
      const report = yield* runPass({ config: () => config, now: NOW, trashDays: 30, allowBigDelete: false })
      yield* transfer(report.execution.downloads)
      return report.execution
    })
  return { root, state, downloads, layer, pass, transfer }
}

const read = (root: string, rel: string) => Fs.readFileSync(Path.join(root, rel), "utf8")

describe("executePlan", () => {
  it.effect("mirrors a tree, follows a folder move with one rename, and trashes a deletion", () => {
    const { root, downloads, layer, pass } = setup()
    const d = folder("d", "Movies")
    const f = file("f", "film.mkv", "d", { size: 5 })
    const g = file("g", "other.mkv", "d", { size: 3 })
    const shelf = folder("s", "Shelf")
    return Effect.gen(function* () {
      const { mirrorRoot } = yield* Store
      assert.isNull(yield* mirrorRoot.caseInsensitive, "no pass has probed the root yet")
      const first = yield* pass([d, f, g, shelf])
      assert.deepStrictEqual(first.failed, [])
      assert.isBoolean(yield* mirrorRoot.caseInsensitive, "the pass records its case probe for status")
      assert.strictEqual(read(root, "Movies/film.mkv"), "xxxxx")
      assert.isTrue(Fs.existsSync(Path.join(root, ".dlsync/marker")))
      const idle = yield* pass([d, f, g, shelf])
      assert.deepStrictEqual(idle.outcomes, [])

      const moved = { ...d, parentId: fid("s"), updatedAt: "2026-02-01T00:00:00Z" }
      const second = yield* pass([moved, f, g, shelf])
      assert.deepStrictEqual(second.counts, { Rename: 1 })
      assert.strictEqual(read(root, "Shelf/Movies/film.mkv"), "xxxxx")
      assert.deepStrictEqual(downloads, ["Movies/film.mkv", "Movies/other.mkv"], "a move downloads nothing")

      const third = yield* pass([moved, f, shelf])
      assert.deepStrictEqual(third.counts, { Trash: 1 })
      assert.strictEqual(read(root, ".dlsync/trash/2026-11-22/Shelf/Movies/other.mkv"), "xxx")
      const store = yield* Store
      assert.deepStrictEqual(
        (yield* store.local.all).map((e) => e.path),
        ["Shelf", "Shelf/Movies", "Shelf/Movies/film.mkv"]
      )
      assert.deepStrictEqual(yield* pass([moved, f, shelf]), {
        outcomes: [],
        failed: [],
        counts: {},
        purged: [],
        downloads: []
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("swaps two names on disk through .dlsync/moving without downloading", () => {
    const { root, downloads, layer, pass } = setup()
    const a = file("a", "a.mkv", null, { size: 1 })
    const b = file("b", "b.mkv", null, { size: 2 })
    return Effect.gen(function* () {
      yield* pass([a, b])
      const swapped = [
        { ...a, name: "b.mkv", updatedAt: "2026-02-01T00:00:00Z" },
        { ...b, name: "a.mkv", updatedAt: "2026-02-01T00:00:00Z" }
      ]
      const report = yield* pass(swapped)
      assert.deepStrictEqual(report.failed, [])
      assert.deepStrictEqual(report.counts, { Rename: 3 })
      assert.strictEqual(read(root, "a.mkv"), "xx")
      assert.strictEqual(read(root, "b.mkv"), "x")
      assert.strictEqual(downloads.length, 2)
      assert.deepStrictEqual((yield* pass(swapped)).outcomes, [])
    }).pipe(Effect.provide(layer))
  })

  it.effect("settles a rename a crash interrupted between the disk and the store", () => {
    const { root, downloads, layer, pass } = setup()
    const f = file("f", "film.mkv", null, { size: 3 })
    return Effect.gen(function* () {
      yield* pass([f])
      const store = yield* Store
      const ino = Fs.lstatSync(Path.join(root, "film.mkv"), { bigint: true }).ino
      // The executor recorded its intent and renamed on disk, then the process died.
      yield* store.pendingOp.begin({ op: "rename", remoteId: fid("f"), from: "film.mkv", to: "Film.mkv", ino })
      Fs.renameSync(Path.join(root, "film.mkv"), Path.join(root, "Film.mkv"))
      yield* recoverInterrupted()
      assert.deepStrictEqual(
        (yield* store.local.all).map((e) => e.path),
        ["Film.mkv"]
      )
      assert.isTrue(Option.isNone(yield* store.pendingOp.get))
      const renamed = { ...f, name: "Film.mkv", updatedAt: "2026-02-01T00:00:00Z" }
      assert.deepStrictEqual((yield* pass([renamed])).counts, { Refresh: 1 })
      assert.deepStrictEqual((yield* pass([renamed])).outcomes, [])
      assert.strictEqual(downloads.length, 1)
      // An intent whose operation never happened changes nothing.
      yield* store.pendingOp.begin({ op: "trash", remoteId: fid("f"), from: "Film.mkv", to: null, ino })
      yield* recoverInterrupted()
      assert.strictEqual((yield* store.local.all).length, 1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("settles no interrupted operation from a root that looks unmounted", () => {
    const { root, layer, pass } = setup()
    const f = file("f", "film.mkv", null, { size: 3 })
    return Effect.gen(function* () {
      yield* pass([f])
      const store = yield* Store
      const ino = Fs.lstatSync(Path.join(root, "film.mkv"), { bigint: true }).ino
      yield* store.pendingOp.begin({ op: "trash", remoteId: fid("f"), from: "film.mkv", to: null, ino })
      // The disk went away: an empty mount point, where the file would look trashed.
      Fs.rmSync(root, { recursive: true })
      Fs.mkdirSync(root)
      const error = yield* Effect.flip(pass([f]))
      assert.strictEqual(error._tag, "RootUnavailable")
      assert.deepStrictEqual(
        (yield* store.local.all).map((e) => e.path),
        ["film.mkv"],
        "the entry is not dropped"
      )
      assert.isTrue(Option.isSome(yield* store.pendingOp.get), "the intent waits for the real root")
    }).pipe(Effect.provide(layer))
  })

  it.effect("lands hostile remote names inside the root, under safe names", () => {
    const { root, layer, pass } = setup()
    const evil = folder("e", "..")
    const items = [
      evil,
      file("p", "../../escape.txt", "e", { size: 1 }),
      file("s", "a/b\\c", null, { size: 1 }),
      file("n", "x\u0000y\n", null, { size: 1 }),
      file("c", "CON", null, { size: 1 }),
      file("l", `${"é".repeat(200)}.mkv`, null, { size: 1 }),
      file("d", ".dlsync", null, { size: 1 })
    ]
    return Effect.gen(function* () {
      const report = yield* pass(items, { ...CONFIG, portableNames: true })
      assert.deepStrictEqual(report.failed, [])
      const names = Fs.readdirSync(root).sort()
      assert.strictEqual(names.length, 7)
      assert.includeMembers(names, ["_", "_CON", "a_b_c", "x_y_", ".dlsync"])
      assert.deepStrictEqual(Fs.readdirSync(Path.join(root, "_")), [".._.._escape.txt"])
      assert.isTrue(names.some((n) => n.startsWith(".dlsync [") && n.length > ".dlsync".length))
      assert.isTrue(names.some((n) => n.endsWith("é.mkv") && Buffer.byteLength(n) <= 255))
      assert.isFalse(Fs.existsSync(Path.join(root, "..", "escape.txt")))
    }).pipe(Effect.provide(layer))
  })

  it.effect("keeps the user's file when it changes between plan and execution", () => {
    const { root, layer, transfer } = setup()
    const f = file("f", "film.mkv", null, { size: 5 })
    return Effect.gen(function* () {
      const store = yield* Store
      const ops = yield* LocalOps
      yield* ops.checkRoot(false)
      const first = yield* executePlan(plan(planInput([f], [], new Map())), { now: NOW, trashDays: 30 })
      yield* transfer(first.downloads)
      const local = yield* store.local.all
      const disk = (yield* scanLocal(local)).disk
      const actions = plan(planInput([], local, disk))
      assert.deepStrictEqual(
        actions.map((a) => a._tag),
        ["Trash"]
      )
      Fs.writeFileSync(Path.join(root, "film.mkv"), "the user's edit")
      const report = yield* executePlan(actions, { now: NOW, trashDays: 30 })
      assert.strictEqual(report.failed.length, 1)
      assert.include(report.failed[0]?.detail ?? "", "changed since it was planned")
      assert.strictEqual(read(root, "film.mkv"), "the user's edit")
      assert.strictEqual((yield* store.local.all).length, 1, "the entry stays until the file is understood")
      const events = yield* store.events.recent(5)
      assert.isTrue(events.some((e) => e.level === "error" && e.path === "film.mkv"))
      assert.isDefined(yield* ops.lstat("film.mkv"))
    }).pipe(Effect.provide(layer))
  })

  it.effect("holds a big delete, records it for status, and removes nothing", () => {
    const { root, layer, pass } = setup()
    const files = Array.from({ length: 60 }, (_, i) => file(`f${i}`, `${i}.mkv`, null, { size: 1 }))
    return Effect.gen(function* () {
      yield* pass(files)
      const report = yield* pass(files.slice(0, 2))
      assert.deepStrictEqual(report.counts, { HoldDeletes: 1 })
      assert.strictEqual(Fs.readdirSync(root).filter((n) => n.endsWith(".mkv")).length, 60)
      const store = yield* Store
      assert.strictEqual((yield* store.held.list).length, 58)
      yield* pass(files)
      assert.deepStrictEqual(yield* store.held.list, [], "a pass without a held delete clears it")
    }).pipe(Effect.provide(layer))
  })

  it.effect("stops on an unmounted root instead of reading it as emptied", () => {
    const { root, layer, pass } = setup()
    const f = file("f", "film.mkv", null, { size: 2 })
    return Effect.gen(function* () {
      yield* pass([f])
      Fs.rmSync(root, { recursive: true })
      Fs.mkdirSync(root)
      const error = yield* Effect.flip(pass([f]))
      assert.strictEqual(error._tag, "RootUnavailable")
      assert.deepStrictEqual(Fs.readdirSync(root), [], "nothing written into the empty mount point")
    }).pipe(Effect.provide(layer))
  })

  it.effect("after losing its store, adopts what matches and keeps the rest as conflict copies", () => {
    const first = setup()
    const d = folder("d", "Movies")
    const f = file("f", "film.mkv", "d", { size: 5 })
    const g = file("g", "other.mkv", "d", { size: 3 })
    return Effect.gen(function* () {
      yield* first.pass([d, f, g]).pipe(Effect.provide(first.layer))
      Fs.writeFileSync(Path.join(first.root, "Movies/other.mkv"), "the user's longer text")
      Fs.writeFileSync(Path.join(first.root, "Movies/notes.txt"), "mine")
      // A new state dir over the same root: the store is lost.
      const second = setup()
      Fs.rmSync(second.root, { recursive: true })
      Fs.renameSync(first.root, second.root)
      const report = yield* Effect.gen(function* () {
        const store = yield* Store
        yield* store.feed.applyPage({ changes: [d, f, g].map(upsert), nextCursor: "live", hasMore: false })
        return yield* runPass({ config: () => CONFIG, now: NOW, trashDays: 30, allowBigDelete: false })
      }).pipe(Effect.provide(second.layer))
      assert.isTrue(report.adoptOnly)
      assert.deepStrictEqual(report.execution.failed, [])
      assert.deepStrictEqual(report.execution.counts, { Adopt: 2, ConflictCopy: 1, Download: 1 })
      assert.deepStrictEqual(
        report.execution.downloads.map((d) => d.path),
        ["Movies/other.mkv"]
      )
      assert.strictEqual(read(second.root, "Movies/other.conflict-2026-11-22.mkv"), "the user's longer text")
      assert.strictEqual(read(second.root, "Movies/notes.txt"), "mine")
      assert.strictEqual(read(second.root, "Movies/film.mkv"), "xxxxx")
    })
  })

  it.effect("respects a file the user deleted, and remembers it", () => {
    const { root, layer, pass } = setup()
    const f = file("f", "film.mkv", null, { size: 2 })
    return Effect.gen(function* () {
      yield* pass([f])
      Fs.rmSync(Path.join(root, "film.mkv"))
      const report = yield* pass([f])
      assert.deepStrictEqual(report.counts, { MarkLocallyDeleted: 1 })
      const store = yield* Store
      assert.deepStrictEqual(yield* store.local.locallyDeleted, [{ remoteId: fid("f"), path: "film.mkv" }])
      assert.deepStrictEqual((yield* pass([f])).counts, { Skip: 1 })
      assert.isFalse(Fs.existsSync(Path.join(root, "film.mkv")))
    }).pipe(Effect.provide(layer))
  })
})

const planInput = (
  remote: ReadonlyArray<RemoteItem>,
  local: Parameters<typeof plan>[0]["local"],
  disk: Parameters<typeof plan>[0]["disk"]
) => ({
  remote,
  local,
  disk,
  locallyDeleted: [],
  config: CONFIG,
  now: NOW,
  listingComplete: true,
  adoptOnly: false,
  allowBigDelete: false
})

describe("executePlan → mirror events", () => {
  it.effect("publishes each move and removal on disk, and a held big delete once while it stays held", () => {
    const { layer, pass } = setup()
    const d = folder("d", "Movies")
    const f = file("f", "film.mkv", "d", { size: 5 })
    const g = file("g", "other.mkv", "d", { size: 3 })
    const shelf = folder("s", "Shelf")
    const many = Array.from({ length: 60 }, (_, i) => file(`m${i}`, `${i}.mkv`, null, { size: 1 }))
    return Effect.gen(function* () {
      const subscription = yield* (yield* MirrorEvents).subscribe
      const published = PubSub.takeUpTo(subscription, 1000)
      yield* pass([d, f, g, shelf, ...many])
      assert.deepStrictEqual(yield* published, [], "landing is the transfer step's to publish, not the executor's")

      const moved = { ...d, parentId: fid("s") }
      yield* pass([moved, f, g, shelf, ...many])
      assert.deepStrictEqual(yield* published, [{ _tag: "local_moved", from: "Movies", to: "Shelf/Movies" }])
      yield* pass([moved, f, shelf, ...many])
      assert.deepStrictEqual(yield* published, [
        { _tag: "local_removed", path: "Shelf/Movies/other.mkv", how: "trash" }
      ])

      yield* pass([moved, f, shelf])
      const held = yield* published
      assert.strictEqual(held.length, 1)
      assert.strictEqual(held[0]?._tag, "deletion_held")
      assert.strictEqual(held[0]?._tag === "deletion_held" ? held[0].count : 0, 60)
      yield* pass([moved, f, shelf])
      assert.deepStrictEqual(yield* published, [], "a hold that stays is not published again")
    }).pipe(Effect.provide(layer))
  })
})
