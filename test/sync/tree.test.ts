import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { RemoteItem } from "../../src/sync/model.ts"
import { foldName, sanitizeName } from "../../src/sync/names.ts"
import { mapTree, type TreeConfig } from "../../src/sync/tree.ts"
import { ALL, file, folder } from "./fixtures.ts"

const paths = (items: ReadonlyArray<RemoteItem>, config: TreeConfig = ALL) =>
  Object.fromEntries(
    mapTree(items, config).placed.map((p) => [p.item.id, p.filtered === null ? p.path : `${p.path} (${p.filtered})`])
  )

describe("mapTree", () => {
  it("maps the folder chain to sanitized relative paths, parents first", () => {
    const tree = mapTree([file("f", "x.mkv", "b"), folder("b", "B/..", "a"), folder("a", "..")], ALL)
    assert.deepStrictEqual(
      tree.placed.map((p) => p.path),
      ["_", "_/B_", "_/B_/x.mkv"]
    )
  })

  it("reports orphans, children of files and cycles instead of placing them", () => {
    const tree = mapTree(
      [
        file("orphan", "o", "missing"),
        file("f", "f"),
        file("child", "c", "f"),
        folder("c1", "c1", "c2"),
        folder("c2", "c2", "c1"),
        file("inCycle", "x", "c1")
      ],
      ALL
    )
    assert.deepStrictEqual(
      tree.placed.map((p) => p.item.id),
      ["f"]
    )
    assert.deepStrictEqual(
      tree.problems.map((p) => `${p.item.id}:${p.problem}`),
      ["c1:cycle", "c2:cycle", "child:parent_is_file", "inCycle:cycle", "orphan:orphan"]
    )
  })

  it("keeps .dlsync free at the root only", () => {
    const p = paths([folder("d", ".dlsync"), folder("e", "E"), file("f", ".dlsync", "e")])
    assert.match(p.d!, /^\.dlsync \[[0-9a-f]{6}\]$/)
    assert.strictEqual(p.f, "E/.dlsync")
  })

  it("filters by selected folders, creating their ancestors but not the files beside them", () => {
    const items = [
      folder("tv", "TV"),
      folder("shows", "Shows", "tv"),
      file("ep", "ep1.mkv", "shows"),
      file("loose", "loose.mkv", "tv"),
      folder("movies", "Movies"),
      file("m", "m.mkv", "movies")
    ]
    assert.deepStrictEqual(paths(items, { ...ALL, folders: ["/TV/Shows/"] }), {
      tv: "TV",
      movies: "Movies (folder_not_selected)",
      shows: "TV/Shows",
      loose: "TV/loose.mkv (folder_not_selected)",
      m: "Movies/m.mkv (folder_not_selected)",
      ep: "TV/Shows/ep1.mkv"
    })
  })

  it("filters by kind, include and exclude globs, and size", () => {
    const items = [
      folder("s", "Sample"),
      file("in-sample", "a.mkv", "s"),
      folder("d", "Movies"),
      file("mkv", "film.mkv", "d"),
      file("nfo", "film.nfo", "d", { kind: "document" }),
      file("big", "big.mkv", "d", { size: 10_000 }),
      file("dot", ".x.mkv", "d")
    ]
    assert.deepStrictEqual(paths(items, { ...ALL, exclude: ["Sample/", "*.nfo"], maxFileSize: 1000 }), {
      d: "Movies",
      s: "Sample (excluded)",
      big: "Movies/big.mkv (too_big)",
      dot: "Movies/.x.mkv",
      mkv: "Movies/film.mkv",
      nfo: "Movies/film.nfo (excluded)",
      "in-sample": "Sample/a.mkv (excluded)"
    })
    assert.strictEqual(paths(items, { ...ALL, kinds: ["video"] }).nfo, "Movies/film.nfo (kind)")
    assert.strictEqual(paths(items, { ...ALL, include: ["Movies/*.mkv"] })["in-sample"], "Sample/a.mkv (not_included)")
    assert.strictEqual(paths(items, { ...ALL, include: ["Movies/*.mkv"] }).mkv, "Movies/film.mkv")
  })

  it("never yields a path that leaves the root, nor two items on one path (property)", () => {
    const hostileName = fc.oneof(
      fc.constantFrom("..", ".", "", "/", "a/../..", "\\..\\", "CON", ".dlsync", "A", "a", "x\u0000"),
      fc.string({ maxLength: 10 })
    )
    const items = fc
      .uniqueArray(
        fc.record({
          id: fc.string({ minLength: 1, maxLength: 3 }),
          name: hostileName,
          isFolder: fc.boolean(),
          parent: fc.nat(20)
        }),
        { selector: (r) => r.id, maxLength: 25 }
      )
      .map((records) =>
        records.map((r, i) => {
          const parentIndex = r.parent % (i + 1)
          const parentId = parentIndex === i ? null : (records[parentIndex]?.id ?? null)
          return r.isFolder ? folder(r.id, r.name, parentId) : file(r.id, r.name, parentId)
        })
      )
    fc.assert(
      fc.property(items, fc.boolean(), fc.boolean(), (list, portableNames, caseInsensitive) => {
        const root = "/mirror/root"
        const tree = mapTree(list, { ...ALL, portableNames, caseInsensitive })
        const seen = new Set<string>()
        for (const p of tree.placed) {
          const resolved = Path.resolve(root, p.path)
          assert.isTrue(resolved.startsWith(root + "/"), `${p.path} leaves the root`)
          assert.notInclude(["", ".", ".."], p.path.split("/")[0])
          for (const part of p.path.split("/")) assert.notInclude(["", ".", ".."], part)
          assert.notStrictEqual(foldName(p.path.split("/")[0]!, caseInsensitive), ".dlsync")
          const key = p.path
            .split("/")
            .map((c) => foldName(c, caseInsensitive))
            .join("/")
          assert.isFalse(seen.has(key), `two items on ${p.path}`)
          seen.add(key)
        }
        assert.strictEqual(tree.placed.length + tree.problems.length, list.length)
      }),
      { numRuns: 200 }
    )
  })

  it("never moves an item because of an unrelated change elsewhere in the tree (property)", () => {
    const names = fc.constantFrom("a", "A", "b", "a.mkv", "A.MKV", "..", "c")
    const tree = fc
      .array(fc.record({ name: names, isFolder: fc.boolean(), parent: fc.nat(20) }), { maxLength: 20 })
      .map((records) => {
        const items: Array<RemoteItem> = []
        records.forEach((r, i) => {
          const folders = items.filter((x) => x.type === "folder")
          const p = r.parent % (folders.length + 1)
          const parentId = p === folders.length ? null : folders[p]!.id
          const at = `2026-01-01T00:00:${String(i).padStart(2, "0")}Z`
          const extra = { createdAt: at, updatedAt: at }
          items.push(r.isFolder ? folder(`n${i}`, r.name, parentId, extra) : file(`n${i}`, r.name, parentId, extra))
        })
        return items
      })
    fc.assert(
      fc.property(tree, names, fc.nat(), fc.boolean(), (items, newName, pick, caseInsensitive) => {
        const config = { ...ALL, caseInsensitive }
        const before = mapTree(items, config)
        const target = items[pick % Math.max(items.length, 1)]
        if (target === undefined) return
        const renamed = items.map((i) => (i.id === target.id ? { ...i, name: newName } : i))
        const after = mapTree(renamed, config)
        const fold = (n: string) => foldName(sanitizeName(n, { portable: false }), caseInsensitive)
        const touched = new Set([fold(target.name), fold(newName)])
        for (const p of before.placed) {
          if (p.item.id === target.id) continue
          // Related: below the renamed item, or a sibling whose name collides with its old or new name.
          const below = p.path.startsWith(before.byId.get(target.id)!.path + "/")
          const sibling = p.item.parentId === target.parentId
          const collides =
            sibling &&
            (touched.has(fold(p.item.name)) || touched.has(foldName(p.path.split("/").pop()!, caseInsensitive)))
          const ancestorCollides = [...before.placed].some(
            (q) =>
              q.item.parentId === target.parentId &&
              q.item.id !== target.id &&
              touched.has(fold(q.item.name)) &&
              p.path.startsWith(q.path + "/")
          )
          if (below || collides || ancestorCollides) continue
          assert.strictEqual(after.byId.get(p.item.id)?.path, p.path, `${p.item.id} moved`)
        }
      }),
      { numRuns: 300 }
    )
  })
})
