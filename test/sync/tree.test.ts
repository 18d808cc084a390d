import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { foldName, MAX_NAME_BYTES, SHORT_NAME_BYTES, sanitizeName, utf8Length } from "../../src/sync/names.ts"
import {
  MAX_PATH_BYTES,
  type MappedTree,
  mapTree,
  maxPathBytesUnder,
  type TreeConfig,
  unmatchedFilters
} from "../../src/sync/tree.ts"
import { ALL, fid, file, folder } from "./fixtures.ts"

/** `depth` nested folders named with `bytes` bytes each, and a file at the bottom. */
const deepChain = (depth: number, bytes: number, fileName = "bottom.mkv"): Array<RemoteItem> => {
  const items: Array<RemoteItem> = []
  for (let i = 0; i < depth; i++) {
    const label = `level ${String(i + 1).padStart(2, "0")} `
    items.push(folder(`d${i}`, label + "x".repeat(bytes - label.length), i === 0 ? null : `d${i - 1}`))
  }
  items.push(file("leaf", fileName, `d${depth - 1}`))
  return items
}

/** Random trees of up to `maxLength` items, each under the root or an earlier folder, created a second apart. */
const treeOf = (name: fc.Arbitrary<string>, maxLength: number) =>
  fc.array(fc.record({ name, isFolder: fc.boolean(), parent: fc.nat(30) }), { maxLength }).map((records) => {
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

/** No two items share a path (nor a folded one when the file system ignores case). */
const assertDistinct = (tree: MappedTree, caseInsensitive: boolean) => {
  const seen = new Set<string>()
  for (const p of tree.placed) {
    const key = p.path
      .split("/")
      .map((c) => foldName(c, caseInsensitive))
      .join("/")
    assert.isFalse(seen.has(key), `two items on ${p.path}`)
    seen.add(key)
  }
}

/** Every placed path fits the budget and is made of components of at most 255 bytes. */
const assertFits = (tree: MappedTree, maxPathBytes: number) => {
  for (const p of tree.placed) {
    assert.isAtMost(utf8Length(p.path), maxPathBytes, p.path)
    for (const part of p.path.split("/")) assert.isAtMost(utf8Length(part), MAX_NAME_BYTES)
  }
}

const paths = (items: ReadonlyArray<RemoteItem>, config: TreeConfig = ALL) =>
  Object.fromEntries(
    mapTree(items, config).placed.map((p) => [p.item.id, p.filtered === null ? p.path : `${p.path} (${p.filtered})`])
  )

describe("mapTree alwaysMirror (the intake queue's downloads)", () => {
  const items = [
    folder("tv", "tv"),
    folder("rel", "Show.S01", "tv"),
    file("video", "Show.S01E01.mkv", "rel", { size: 5_000 }),
    folder("subs", "Subs", "rel"),
    file("srt", "en.srt", "subs"),
    file("other", "other.mkv", "tv"),
    folder("movies", "Movies"),
    file("m", "m.mkv", "movies")
  ]
  const filtered = { ...ALL, folders: ["Movies"], include: ["*.nfo"], kinds: ["document"], maxFileSize: 10 }

  it("places a forced download and everything below it whatever the filters, and its ancestor folders", () => {
    assert.deepStrictEqual(paths(items, { ...filtered, alwaysMirror: new Set(["rel"]) }), {
      tv: "tv",
      movies: "Movies",
      rel: "tv/Show.S01",
      other: "tv/other.mkv (folder_not_selected)",
      m: "Movies/m.mkv (kind)",
      video: "tv/Show.S01/Show.S01E01.mkv",
      subs: "tv/Show.S01/Subs",
      srt: "tv/Show.S01/Subs/en.srt"
    })
  })

  it("forces single files too, and nothing without it", () => {
    const forced = paths(items, { ...filtered, exclude: ["tv/"], alwaysMirror: new Set(["video"]) })
    assert.strictEqual(forced.video, "tv/Show.S01/Show.S01E01.mkv")
    assert.strictEqual(forced.rel, "tv/Show.S01")
    assert.strictEqual(forced.srt, "tv/Show.S01/Subs/en.srt (folder_not_selected)")
    assert.strictEqual(paths(items, filtered).video, "tv/Show.S01/Show.S01E01.mkv (folder_not_selected)")
  })
})

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

  it("keeps names that start with two dots as they are: one component inside the root", () => {
    const p = paths([folder("h", "..hidden"), file("t", "...txt", "h"), file("x", "../x"), file("d", "..")])
    assert.deepStrictEqual(p, { d: "_", h: "..hidden", x: ".._x", t: "..hidden/...txt" })
  })

  it("shortens the deepest long names so that a deep tree fits PATH_MAX under its root", () => {
    const root = "/tmp/dlsync-it-abcdef/root"
    const maxPathBytes = maxPathBytesUnder(root)
    const items = deepChain(24, 180)
    const tree = mapTree(items, { ...ALL, maxPathBytes })
    assert.strictEqual(tree.problems.length, 0)
    assert.strictEqual(tree.placed.length, 25)
    assertFits(tree, maxPathBytes)
    const leaf = tree.byId.get("leaf")!
    assert.isAtMost(utf8Length(`${root}/${leaf.path}`), MAX_PATH_BYTES - 1 - 64)
    // Only the deepest folders are short, as few as needed; the file name was short already.
    const short = tree.placed.filter((p) => p.shortened).map((p) => p.item.id)
    assert.deepStrictEqual(short, ["d20", "d21", "d22", "d23"])
    assert.isTrue(leaf.path.endsWith("/bottom.mkv"))
    const name = tree.byId.get("d23")!.path.split("/").pop()!
    assert.match(name, /^level 24 x+ \[[0-9a-f]{6}\]$/)
    assert.isAtMost(utf8Length(name), SHORT_NAME_BYTES)
    assert.strictEqual(tree.byId.get("d19")!.path.split("/").pop(), items[19]!.name, "names above stay whole")
  })

  it("keeps the extension of a shortened file name", () => {
    const tree = mapTree(deepChain(3, 250, `${"y".repeat(240)}.mkv`), { ...ALL, maxPathBytes: 700 })
    const leaf = tree.byId.get("leaf")!
    assert.isTrue(leaf.shortened)
    assert.match(leaf.path.split("/").pop()!, /^y+ \[[0-9a-f]{6}\]\.mkv$/)
    assertFits(tree, 700)
  })

  it("filters on the full names, so shortening never changes what is in scope", () => {
    const items = deepChain(3, 250)
    const tree = mapTree(items, { ...ALL, maxPathBytes: 400, include: [`**/${items[2]!.name}/*.mkv`] })
    const leaf = tree.byId.get("leaf")!
    assert.isTrue(tree.byId.get("d2")!.shortened)
    assert.isNull(leaf.filtered)
  })

  it("unmatchedFilters judges the filters on the full names too: a shortened match is no typo", () => {
    const items = deepChain(3, 250)
    const full = `${items[0]!.name}/${items[1]!.name}/${items[2]!.name}`
    const config = {
      ...ALL,
      maxPathBytes: 400,
      folders: [full],
      include: [`**/${items[2]!.name}/*.mkv`],
      exclude: [`${items[2]!.name}/`]
    }
    const tree = mapTree(items, config)
    assert.isTrue(tree.byId.get("d2")!.shortened)
    assert.deepStrictEqual(unmatchedFilters(tree, config), [])
    const typos = { ...config, folders: [`${full}x`], include: ["**/nothing/*.mkv"], exclude: ["nothing/"] }
    assert.lengthOf(unmatchedFilters(mapTree(items, typos), typos), 3)
  })

  it("reports an item too deep even with short names instead of placing it", () => {
    const tree = mapTree(deepChain(10, 100), { ...ALL, maxPathBytes: 500 })
    assertFits(tree, 500)
    const tooDeep = tree.problems.filter((p) => p.problem === "too_deep").map((p) => p.item.id)
    assert.isAbove(tooDeep.length, 0)
    assert.include(tooDeep, fid("leaf"))
    assert.strictEqual(tree.placed.length + tree.problems.length, 11)
    assert.match(tree.problems.find((p) => p.item.id === "leaf")!.detail, /PATH_MAX/)
  })

  it("fits every path into the budget, shortening only long names below a too-long path (property)", () => {
    const name = fc.oneof(
      fc.constantFrom("a", "..hidden", "...txt", "../x", "A.MKV", "é".repeat(120), "x".repeat(300) + ".srt"),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 90 })
    )
    const items = treeOf(name, 30)
    fc.assert(
      fc.property(items, fc.integer({ min: 40, max: 2000 }), fc.boolean(), (list, maxPathBytes, caseInsensitive) => {
        const config = { ...ALL, maxPathBytes, caseInsensitive }
        const tree = mapTree(list, config)
        assertFits(tree, maxPathBytes)
        assert.strictEqual(tree.placed.length + tree.problems.length, list.length)
        const full = mapTree(list, { ...config, maxPathBytes: Number.MAX_SAFE_INTEGER })
        assertDistinct(tree, caseInsensitive)
        for (const p of tree.placed) {
          const unshortened = full.byId.get(p.item.id)!
          assert.strictEqual(p.filtered, unshortened.filtered)
          if (!p.shortened) {
            const own = (x: string) => x.split("/").pop()
            assert.strictEqual(own(p.path), own(unshortened.path), "a name not shortened stays whole")
          } else {
            // Shortened only when its own full path, or one below it, would not fit.
            const needs = full.placed.some(
              (q) =>
                tree.byId.has(q.item.id) &&
                (q.path === unshortened.path || q.path.startsWith(`${unshortened.path}/`)) &&
                utf8Length(q.path) > maxPathBytes
            )
            assert.isTrue(needs, `${p.path} shortened without need`)
          }
        }
        // Too deep: even with every long name short the path would not fit.
        for (const problem of tree.problems) assert.strictEqual(problem.problem, "too_deep")
        // Deterministic, whatever order the items come in.
        assert.deepStrictEqual(mapTree([...list].reverse(), config).byId, tree.byId)
      }),
      { numRuns: 300 }
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
      fc.constantFrom(
        "..",
        ".",
        "",
        "/",
        "a/../..",
        "\\..\\",
        "CON",
        ".dlsync",
        "A",
        "a",
        "x\u0000",
        "..hidden",
        "...txt",
        "../x"
      ),
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
        assertDistinct(tree, caseInsensitive)
        for (const p of tree.placed) {
          const resolved = Path.resolve(root, p.path)
          assert.isTrue(resolved.startsWith(root + "/"), `${p.path} leaves the root`)
          assert.notInclude(["", ".", ".."], p.path.split("/")[0])
          for (const part of p.path.split("/")) assert.notInclude(["", ".", ".."], part)
          assert.notStrictEqual(foldName(p.path.split("/")[0]!, caseInsensitive), ".dlsync")
        }
        assert.strictEqual(tree.placed.length + tree.problems.length, list.length)
      }),
      { numRuns: 200 }
    )
  })

  it("never moves an item because of an unrelated change elsewhere in the tree (property)", () => {
    const names = fc.constantFrom("a", "A", "b", "a.mkv", "A.MKV", "..", "c")
    const tree = treeOf(names, 20)
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
