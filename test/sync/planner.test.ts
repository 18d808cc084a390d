import { assert, describe, it } from "@effect/vitest"
import type { LocalEntry, LocallyDeleted, LocalStat } from "../../src/domain/LocalEntry.ts"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { type Action, conflictPath, exceedsDeleteLimit, type PlanInput, plan } from "../../src/sync/planner.ts"
import { mapTree } from "../../src/sync/tree.ts"
import { entryOf, fid, file, folder, statOf } from "./fixtures.ts"
import { CONFIG } from "./planner.fixtures.ts"
import { Sim } from "./simulator.ts"

const NOW = new Date("2026-11-22T05:00:00Z")

const input = (fields: Partial<PlanInput> & Pick<PlanInput, "remote">): PlanInput => ({
  local: [],
  disk: new Map(),
  locallyDeleted: [],
  config: CONFIG,
  now: NOW,
  listingComplete: true,
  adoptOnly: false,
  allowBigDelete: false,
  ...fields
})

/** Remote items mirrored as synced entries with matching disk stats, at the paths given. */
const mirrored = (pairs: ReadonlyArray<readonly [RemoteItem, string]>) => ({
  local: pairs.map(([i, p]) => entryOf(i, p)),
  disk: new Map<string, LocalStat>(pairs.map(([i, p]) => [p, statOf(i)]))
})

/** A compact view of actions: `Tag path` or `Tag from → to`, skips with their code. */
const show = (actions: ReadonlyArray<Action>): Array<string> =>
  actions.map((a) => {
    switch (a._tag) {
      case "Rename":
      case "ConflictCopy":
        return `${a._tag} ${a.from} → ${a.to}`
      case "Skip":
        return `Skip ${a.code} ${a.path ?? a.remoteId}`
      case "HoldDeletes":
        return `HoldDeletes ${a.count}/${a.mirrored}`
      case "Forget":
        return `Forget ${a.what} ${a.path}`
      default:
        return `${a._tag} ${a.path}`
    }
  })

const d = folder("d", "Movies")
const f = file("f", "film.mkv", "d")

describe("plan", () => {
  it("creates folders before the files that go in them, and downloads last", () => {
    assert.deepStrictEqual(show(plan(input({ remote: [f, d, file("r", "readme.txt")] }))), [
      "Mkdir Movies",
      "Download readme.txt",
      "Download Movies/film.mkv"
    ])
  })

  it("does nothing when the mirror matches", () => {
    assert.deepStrictEqual(
      plan(
        input({
          remote: [d, f],
          ...mirrored([
            [d, "Movies"],
            [f, "Movies/film.mkv"]
          ])
        })
      ),
      []
    )
  })

  it("renames a renamed file instead of downloading it again", () => {
    const renamed = { ...f, name: "Film (2026).mkv", updatedAt: "2026-02-01T00:00:00Z" }
    const actions = plan(
      input({
        remote: [d, renamed],
        ...mirrored([
          [d, "Movies"],
          [f, "Movies/film.mkv"]
        ])
      })
    )
    assert.deepStrictEqual(show(actions), ["Rename Movies/film.mkv → Movies/Film (2026).mkv"])
  })

  it("moves a folder with one rename, its contents following", () => {
    const shelf = folder("s", "Shelf")
    const inner = folder("i", "Inner", "d")
    const deep = file("x", "x.mkv", "i")
    const moved = { ...d, parentId: fid("s"), updatedAt: "2026-02-01T00:00:00Z" }
    const actions = plan(
      input({
        remote: [shelf, moved, f, inner, deep],
        ...mirrored([
          [shelf, "Shelf"],
          [d, "Movies"],
          [f, "Movies/film.mkv"],
          [inner, "Movies/Inner"],
          [deep, "Movies/Inner/x.mkv"]
        ])
      })
    )
    assert.deepStrictEqual(show(actions), ["Rename Movies → Shelf/Movies"])
  })

  it("renames a shortened folder, and folders whose names a rename shortens, without fetching again", () => {
    const config = { ...CONFIG, maxPathBytes: 640 }
    const chain = [0, 1, 2, 3].map((i) =>
      folder(`c${i}`, `level ${i} ${"x".repeat(240)}`, i === 0 ? null : `c${i - 1}`)
    )
    const leaf = file("leaf", "film.mkv", "c3")
    const remote = [...chain, leaf]
    const synced = mirrored(mapTree(remote, config).placed.map((p) => [p.item, p.path] as const))
    const short = mapTree(remote, config).placed.filter((p) => p.shortened)
    assert.deepStrictEqual(
      short.map((p) => p.item.id),
      ["c2", "c3"]
    )
    const at = "2026-02-01T00:00:00Z"
    const renamedShort = remote.map((i) =>
      i.id === "c3" ? { ...i, name: `renamed ${"y".repeat(240)}`, updatedAt: at } : i
    )
    const one = plan(input({ remote: renamedShort, config, ...synced }))
    assert.deepStrictEqual(
      one.map((a) => a._tag),
      ["Rename"]
    )
    assert.match(show(one)[0]!, / → .*\/renamed y+ \[[0-9a-f]{6}\]$/)
    // A longer top name makes one more folder short: renames again, never a download.
    const renamedTop = remote.map((i) =>
      i.id === "c0" ? { ...i, name: `${i.name}${"z".repeat(7)}`, updatedAt: at } : i
    )
    const more = plan(input({ remote: renamedTop, config, ...synced }))
    assert.isAbove(more.length, 1)
    assert.isTrue(
      more.every((a) => a._tag === "Rename"),
      show(more).join("\n")
    )
  })

  it("swaps two names through .dlsync/moving without losing either", () => {
    const a = file("a", "a.mkv")
    const b = file("b", "b.mkv")
    const sim = new Sim()
    sim.apply(plan(input({ remote: [a, b] })))
    const swapped = [
      { ...a, name: "b.mkv", updatedAt: "2026-02-01T00:00:00Z" },
      { ...b, name: "a.mkv", updatedAt: "2026-02-01T00:00:00Z" }
    ]
    const actions = plan(input({ remote: swapped, local: sim.localEntries(), disk: sim.stats() }))
    assert.deepStrictEqual(
      actions.map((x) => x._tag),
      ["Rename", "Rename", "Rename"]
    )
    sim.apply(actions)
    assert.strictEqual(sim.disk.get("a.mkv")?.content, `remote:b:${b.size}:${b.updatedAt}`)
    assert.strictEqual(sim.disk.get("b.mkv")?.content, `remote:a:${a.size}:${a.updatedAt}`)
    assert.deepStrictEqual(plan(input({ remote: swapped, local: sim.localEntries(), disk: sim.stats() })), [])
  })

  it("downloads a new version over an intact copy, checking it is still what dlsync wrote", () => {
    const edited = { ...f, size: 200, updatedAt: "2026-02-01T00:00:00Z" }
    const actions = plan(
      input({
        remote: [d, edited],
        ...mirrored([
          [d, "Movies"],
          [f, "Movies/film.mkv"]
        ])
      })
    )
    assert.deepStrictEqual(actions, [
      {
        _tag: "Download",
        path: "Movies/film.mkv",
        item: edited,
        replace: statOf(f),
        reason: "new version on the remote"
      }
    ])
  })

  it("keeps a user-changed file as a conflict copy before a remote update lands", () => {
    const edited = { ...f, size: 200, updatedAt: "2026-02-01T00:00:00Z" }
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    const changed: LocalStat = { ...statOf(f), size: 5, mtimeNs: 99n }
    const actions = plan(
      input({ remote: [d, edited], ...base, disk: new Map([...base.disk, ["Movies/film.mkv", changed]]) })
    )
    assert.deepStrictEqual(show(actions), [
      "ConflictCopy Movies/film.mkv → Movies/film.conflict-2026-11-22.mkv",
      "Download Movies/film.mkv"
    ])
    const download = actions[1]
    assert.isTrue(download?._tag === "Download" && download.replace === null)
  })

  it("leaves a user-changed file alone when the remote has nothing new", () => {
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    const changed: LocalStat = { ...statOf(f), mtimeNs: 99n }
    const actions = plan(
      input({ remote: [d, f], ...base, disk: new Map([...base.disk, ["Movies/film.mkv", changed]]) })
    )
    assert.deepStrictEqual(show(actions), ["Skip modified_locally Movies/film.mkv"])
  })

  it("numbers conflict copies that would collide", () => {
    assert.strictEqual(conflictPath("a/b.tar.gz", "2026-11-22", 1), "a/b.tar.conflict-2026-11-22.gz")
    assert.strictEqual(conflictPath("b", "2026-11-22", 3), "b.conflict-2026-11-22-3")
  })

  it("trashes, deletes or keeps a remotely deleted file per on_remote_delete", () => {
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    assert.deepStrictEqual(show(plan(input({ remote: [d], ...base }))), ["Trash Movies/film.mkv"])
    assert.deepStrictEqual(
      show(plan(input({ remote: [d], ...base, config: { ...CONFIG, onRemoteDelete: "delete" } }))),
      ["Delete Movies/film.mkv"]
    )
    assert.deepStrictEqual(show(plan(input({ remote: [d], ...base, config: { ...CONFIG, onRemoteDelete: "keep" } }))), [
      "Forget entry Movies/film.mkv"
    ])
    assert.deepStrictEqual(show(plan(input({ remote: [], ...base }))), ["Trash Movies/film.mkv", "RemoveFolder Movies"])
  })

  it("never removes a file the user changed, nor anything while the listing is incomplete", () => {
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    const changed = new Map([...base.disk, ["Movies/film.mkv", { ...statOf(f), size: 1 }]])
    assert.deepStrictEqual(show(plan(input({ remote: [d], ...base, disk: changed }))), ["Forget entry Movies/film.mkv"])
    assert.deepStrictEqual(plan(input({ remote: [d], ...base, listingComplete: false })), [])
    assert.deepStrictEqual(plan(input({ remote: [d], ...base, adoptOnly: true })), [])
  })

  it("keeps a remote deletion pending while its folder is replaced by a symlink, and applies it once the folder is back", () => {
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    const link: LocalStat = { type: "symlink", size: 9, mtimeNs: 1n, ino: 99n }
    const blocked = new Map<string, LocalStat>([["Movies", link]])
    assert.deepStrictEqual(show(plan(input({ remote: [d], ...base, disk: blocked }))), [
      "Skip parent_blocked Movies/film.mkv",
      "Skip occupied Movies"
    ])
    assert.deepStrictEqual(show(plan(input({ remote: [], ...base, disk: blocked }))), [
      "Skip parent_blocked Movies",
      "Skip parent_blocked Movies/film.mkv"
    ])
    assert.deepStrictEqual(show(plan(input({ remote: [d], ...base }))), ["Trash Movies/film.mkv"])
    // The symlink removed instead: nothing is left to wait for.
    assert.deepStrictEqual(show(plan(input({ remote: [], ...base, disk: new Map() }))), [
      "Forget entry Movies",
      "Forget entry Movies/film.mkv"
    ])
    // Moved out of the folder on the remote meanwhile: not taken for a local deletion either.
    const out = { ...f, parentId: null, updatedAt: "2026-02-01T00:00:00Z" }
    assert.deepStrictEqual(show(plan(input({ remote: [d, out], ...base, disk: blocked }))), [
      "Skip occupied Movies",
      "Skip parent_blocked Movies/film.mkv"
    ])
  })

  it("keeps the local copy of what remote cleanup deleted on the service: forgotten, never trashed, not counted", () => {
    const files = Array.from({ length: 60 }, (_, i) => file(`f${i}`, `${i}.mkv`))
    const base = mirrored(files.map((x) => [x, x.name] as const))
    const cleanedUp = new Set(files.slice(0, 55).map((x) => x.id))
    const actions = plan(input({ remote: files.slice(55), ...base, cleanedUp }))
    assert.strictEqual(actions.filter((a) => a._tag === "Forget").length, 55)
    assert.isTrue(actions.every((a) => a._tag === "Forget" && cleanedUp.has(a.remoteId)))
    // A deletion dlsync did not cause is still trashed.
    const other = plan(input({ remote: files.slice(1, 55), ...base, cleanedUp: new Set([files[0]!.id]) }))
    assert.deepStrictEqual(show(other).slice(0, 1), ["Forget entry 0.mkv"])
    assert.includeMembers(show(other), ["Trash 55.mkv", "Trash 59.mkv"])
  })

  it("holds a big delete unless allowed", () => {
    const files = Array.from({ length: 60 }, (_, i) => file(`f${i}`, `${i}.mkv`))
    const base = mirrored(files.map((x) => [x, x.name] as const))
    const held = plan(input({ remote: files.slice(0, 5), ...base }))
    assert.deepStrictEqual(show(held), ["HoldDeletes 55/60"])
    const allowed = plan(input({ remote: files.slice(0, 5), ...base, allowBigDelete: true }))
    assert.strictEqual(allowed.filter((a) => a._tag === "Trash").length, 55)
    const capped = plan(input({ remote: files.slice(0, 55), ...base, config: { ...CONFIG, maxDelete: 4 } }))
    assert.deepStrictEqual(show(capped), ["HoldDeletes 5/60"])
    assert.isFalse(exceedsDeleteLimit(50, 60, null))
    assert.isFalse(exceedsDeleteLimit(51, 1000, null))
    assert.isTrue(exceedsDeleteLimit(51, 500, null))
  })

  it("respects a user deletion, or fetches again per on_local_delete", () => {
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    const gone = new Map([...base.disk].filter(([p]) => p !== "Movies/film.mkv"))
    assert.deepStrictEqual(show(plan(input({ remote: [d, f], ...base, disk: gone }))), [
      "MarkLocallyDeleted Movies/film.mkv"
    ])
    const marker: LocallyDeleted = { remoteId: fid("f"), path: "Movies/film.mkv" }
    const afterMark = { local: base.local.filter((e) => e.remoteId !== "f"), disk: gone, locallyDeleted: [marker] }
    assert.deepStrictEqual(show(plan(input({ remote: [d, f], ...afterMark }))), [
      "Skip locally_deleted Movies/film.mkv"
    ])
    const redownload = { ...CONFIG, onLocalDelete: "redownload" as const }
    assert.deepStrictEqual(show(plan(input({ remote: [d, f], ...base, disk: gone, config: redownload }))), [
      "Download Movies/film.mkv"
    ])
  })

  it("forgets a deletion marker once the remote item is gone too", () => {
    const marker: LocallyDeleted = { remoteId: fid("f"), path: "Movies/film.mkv" }
    const base = mirrored([[d, "Movies"]])
    assert.deepStrictEqual(show(plan(input({ remote: [d], ...base, locallyDeleted: [marker] }))), [
      "Forget marker Movies/film.mkv"
    ])
  })

  it("marks a folder the user deleted, and everything that was in it", () => {
    const base = mirrored([
      [d, "Movies"],
      [f, "Movies/film.mkv"]
    ])
    const actions = plan(input({ remote: [d, f], ...base, disk: new Map() }))
    assert.deepStrictEqual(show(actions), ["MarkLocallyDeleted Movies", "MarkLocallyDeleted Movies/film.mkv"])
  })

  it("never touches a file dlsync did not write, even where a remote file belongs", () => {
    const user: LocalStat = { type: "file", size: 3, mtimeNs: 5n, ino: 77n }
    const actions = plan(
      input({
        remote: [d, f],
        disk: new Map([
          ["Movies", { ...user, type: "folder" }],
          ["Movies/film.mkv", user]
        ])
      })
    )
    assert.deepStrictEqual(show(actions), ["Adopt Movies", "Skip occupied Movies/film.mkv"])
  })

  it("in adopt-only mode adopts what matches and keeps the rest as conflict copies", () => {
    const other = file("o", "other.mkv", "d", { size: 50 })
    const same = file("s", "same.mkv", "d", { size: 100 })
    const landedAt = BigInt(Date.parse(f.updatedAt)) * 1_000_000n
    const disk = new Map<string, LocalStat>([
      ["Movies", { type: "folder", size: 0, mtimeNs: 1n, ino: 10n }],
      // As the transfer engine lands it: its mtime is the remote updated_at (to within a µs).
      ["Movies/film.mkv", { type: "file", size: 100, mtimeNs: landedAt - 1_000n, ino: 11n }],
      ["Movies/other.mkv", { type: "file", size: 7, mtimeNs: landedAt, ino: 12n }],
      ["Movies/mine.txt", { type: "file", size: 7, mtimeNs: 1n, ino: 13n }],
      // Overwritten by the user with as many bytes of other content: a fresh mtime.
      ["Movies/same.mkv", { type: "file", size: 100, mtimeNs: BigInt(NOW.getTime()) * 1_000_000n, ino: 14n }]
    ])
    const actions = plan(input({ remote: [d, f, other, same], disk, adoptOnly: true }))
    assert.deepStrictEqual(show(actions), [
      "Adopt Movies",
      "Adopt Movies/film.mkv",
      "ConflictCopy Movies/other.mkv → Movies/other.conflict-2026-11-22.mkv",
      "ConflictCopy Movies/same.mkv → Movies/same.conflict-2026-11-22.mkv",
      "Download Movies/other.mkv",
      "Download Movies/same.mkv"
    ])
  })

  it("skips locked, filtered, too big and unplaceable items, saying why", () => {
    const actions = plan(
      input({
        remote: [
          file("l", "locked.mkv", null, { locked: true }),
          file("n", "x.nfo"),
          file("b", "big.mkv", null, { size: 10_000 }),
          file("o", "orphan.mkv", "nowhere")
        ],
        config: { ...CONFIG, exclude: ["*.nfo"], maxFileSize: 1000 }
      })
    )
    assert.deepStrictEqual(show(actions), [
      "Skip broken_parent o",
      "Skip too_big big.mkv",
      "Skip locked locked.mkv",
      "Skip filtered x.nfo"
    ])
    const orphanEntry: LocalEntry = entryOf(file("o", "orphan.mkv"), "orphan.mkv")
    const kept = plan(
      input({
        remote: [file("o", "orphan.mkv", "nowhere")],
        local: [orphanEntry],
        disk: new Map([["orphan.mkv", statOf(file("o", "orphan.mkv"))]])
      })
    )
    assert.deepStrictEqual(show(kept), ["Skip broken_parent orphan.mkv"])
  })

  it("skips an item too deep for PATH_MAX even with short names as too_deep, and removes nothing", () => {
    const top = folder("t", "t".repeat(200))
    const deep = file("x", "x".repeat(200), "t")
    const config = { ...CONFIG, maxPathBytes: 100 }
    const actions = plan(input({ remote: [top, deep], config }))
    assert.deepStrictEqual(
      show(actions).map((a) => a.replace(/t+ \[[0-9a-f]{6}\]/, "T")),
      ["Mkdir T", "Skip too_deep x"]
    )
    // A mirrored copy (from a shorter root, say) is left where it is, not trashed.
    const kept = plan(input({ remote: [top, deep], config, ...mirrored([[deep, "old/x"]]) }))
    assert.isFalse(kept.some((a) => a._tag === "Trash" || a._tag === "Delete" || a._tag === "Forget"))
    assert.include(show(kept), "Skip too_deep old/x")
  })

  it("keeps the current copy of a locked item that has a new version", () => {
    const edited = { ...f, size: 300, locked: true, updatedAt: "2026-02-01T00:00:00Z" }
    const actions = plan(
      input({
        remote: [d, edited],
        ...mirrored([
          [d, "Movies"],
          [f, "Movies/film.mkv"]
        ])
      })
    )
    assert.deepStrictEqual(show(actions), ["Skip locked Movies/film.mkv"])
  })

  it("records new remote details that change neither path nor content", () => {
    const touched = { ...f, name: "film.mkv.", updatedAt: "2026-02-01T00:00:00Z" }
    const actions = plan(
      input({
        remote: [d, touched],
        ...mirrored([
          [d, "Movies"],
          [f, "Movies/film.mkv"]
        ])
      })
    )
    assert.deepStrictEqual(show(actions), ["Refresh Movies/film.mkv"])
  })

  it("lets a new item take the name of a removed one in the same pass", () => {
    const replacement = file("f2", "film.mkv", "d", { size: 300 })
    const sim = new Sim()
    sim.apply(plan(input({ remote: [d, f] })))
    const actions = plan(input({ remote: [d, replacement], local: sim.localEntries(), disk: sim.stats() }))
    assert.deepStrictEqual(show(actions), ["Trash Movies/film.mkv", "Download Movies/film.mkv"])
    sim.apply(actions)
    assert.strictEqual(sim.disk.get("Movies/film.mkv")?.content, `remote:f2:300:${replacement.updatedAt}`)
  })

  it("follows a case-only rename on a case-insensitive root", () => {
    const config = { ...CONFIG, caseInsensitive: true }
    const upper = { ...f, name: "FILM.mkv", updatedAt: "2026-02-01T00:00:00Z" }
    const actions = plan(
      input({
        remote: [d, upper],
        config,
        ...mirrored([
          [d, "Movies"],
          [f, "Movies/film.mkv"]
        ])
      })
    )
    assert.deepStrictEqual(show(actions), ["Rename Movies/film.mkv → Movies/FILM.mkv"])
  })
})
