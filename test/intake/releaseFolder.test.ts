/** Where a release lives (pure): its service folder, and the one path that covers its files. */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  contentRootOf,
  expectedContentRoot,
  releaseDirectory,
  releaseFolderName
} from "../../src/intake/releaseFolder.ts"
import type { SourceKind } from "../../src/store/intakeTables.ts"

describe("releaseDirectory", () => {
  it("a torrent or a URL goes to its category, where the service makes its root (folder or file); an NZB gets a folder", () => {
    assert.strictEqual(releaseDirectory("magnet", "tv", "Show.S01"), "tv")
    assert.strictEqual(releaseDirectory("torrent", "", "Show.S01"), "")
    assert.strictEqual(releaseDirectory("url", "movies", "Movie.mkv"), "movies")
    assert.strictEqual(releaseDirectory("nzb", "tv", "Show.S01"), "tv/Show.S01")
    assert.strictEqual(releaseDirectory("nzb", "", "a/b"), "a_b")
  })

  it("a name taken on the service or by another release (in any case) gets a folder of its own, numbered", () => {
    const taken = new Set(["movies/same.name.s01", "movies/same.name.s01 (2)"])
    assert.strictEqual(releaseDirectory("magnet", "movies", "Same.Name.S01", taken), "movies/Same.Name.S01 (3)")
    assert.strictEqual(releaseDirectory("nzb", "movies", "Same.Name.S01", taken), "movies/Same.Name.S01 (3)")
    assert.strictEqual(releaseDirectory("magnet", "tv", "Same.Name.S01", taken), "tv")
  })

  it("releases added one after another never share a content root", () => {
    const kinds: ReadonlyArray<SourceKind> = ["magnet", "torrent", "nzb", "url"]
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom(...kinds),
            category: fc.constantFrom("", "tv", "movies"),
            name: fc.constantFrom("A", "a", "B", "A (2)", "x/y", "..", " ")
          }),
          { maxLength: 12 }
        ),
        (releases) => {
          const taken = new Set<string>()
          for (const r of releases) {
            const directory = releaseDirectory(r.kind, r.category, r.name, taken)
            const root = expectedContentRoot(directory, r.category, r.name).toLowerCase()
            assert.isFalse(taken.has(root), `${root} given twice`)
            taken.add(root)
          }
        }
      )
    )
  })
})

describe("contentRootOf", () => {
  it("one file is its own root; several share their deepest folder", () => {
    assert.strictEqual(contentRootOf(["tv/X.mkv"], "tv"), "tv/X.mkv")
    assert.strictEqual(contentRootOf(["tv/S/a.mkv", "tv/S/Subs/a.srt"], "tv"), "tv/S")
    assert.strictEqual(contentRootOf(["tv/S (2)/S/a.mkv", "tv/S (2)/S/b.mkv"], "tv"), "tv/S (2)/S")
  })

  it("never the category folder or above: loose files in a shared folder have no root", () => {
    assert.isUndefined(contentRootOf(["tv/a.mkv", "tv/b.mkv"], "tv"))
    assert.isUndefined(contentRootOf(["a.mkv", "b.mkv"], ""))
    assert.isUndefined(contentRootOf(["movies/S/a.mkv"], "tv"))
    assert.isUndefined(contentRootOf([], "tv"))
    assert.strictEqual(contentRootOf(["S/a.mkv", "S/b.mkv"], ""), "S")
  })
})

describe("releaseFolderName", () => {
  it("one folder name, never empty, '.' or '..'", () => {
    assert.strictEqual(releaseFolderName("a/b"), "a_b")
    for (const bad of ["", " ", ".", ".."]) assert.strictEqual(releaseFolderName(bad), "_")
  })
})
