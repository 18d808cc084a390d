import { assert, describe, it } from "vitest"
import { generateLibrary, parseLibrarySpec } from "../../src/emulator/library.ts"
import { EmulatorState } from "../../src/emulator/state.ts"

const build = (spec: string) => {
  const state = new EmulatorState()
  generateLibrary(state, state.primaryUser.id, parseLibrarySpec(spec))
  return [...state.primaryUser.tree.values()]
}

describe("--library", () => {
  it("demo: about forty items with nested folders, media, posters, subtitles and a locked file", () => {
    const items = build("demo")
    assert.isAtLeast(items.length, 35)
    assert.isAtMost(items.length, 60)
    const videos = items.filter((i) => i.kind === "video")
    assert.isTrue(videos.every((v) => v.media !== null))
    assert.isTrue(videos.some((v) => v.poster !== null))
    assert.isTrue(items.some((i) => i.kind === "subtitle"))
    assert.isTrue(items.some((i) => i.locked))
    const depth = (id: string | null): number =>
      id === null ? 0 : 1 + depth(items.find((i) => i.id === id)?.parentId ?? null)
    assert.isAtLeast(Math.max(...items.map((i) => depth(i.id))), 4, "nested folders")
  })

  it("demo: names that need sanitizing", () => {
    const names = build("demo").map((i) => i.name)
    for (const name of ["a/b", "..", "..hidden", "...txt", "../x", "CON", "trailing. ", "Readme.txt", "README.txt"]) {
      assert.include(names, name)
    }
    assert.isTrue(
      names.some((n) => n.length > 255),
      "a very long name"
    )
    assert.isTrue(
      names.some((n) => n !== n.normalize("NFC")),
      "an NFD name"
    )
    assert.isTrue(
      names.some((n) => /[<>:"|?*]/.test(n)),
      "reserved characters"
    )
  })

  it("files=N,depth=D: exactly N files, at most D folder levels, deterministic", () => {
    const items = build("files=500,depth=3")
    const files = items.filter((i) => i.type === "file")
    assert.strictEqual(files.length, 500)
    const byId = new Map(items.map((i) => [i.id, i]))
    const level = (id: string | null): number => (id === null ? 0 : 1 + level(byId.get(id)?.parentId ?? null))
    assert.isAtMost(Math.max(...items.filter((i) => i.type === "folder").map((i) => level(i.id))), 3)
    const again = build("files=500,depth=3")
    assert.deepStrictEqual(
      again.map((i) => [i.id, i.name, i.parentId, i.sizeBytes]),
      items.map((i) => [i.id, i.name, i.parentId, i.sizeBytes])
    )
  })

  it("files=100000,depth=4 generates 100,000 files", () => {
    const items = build("files=100000,depth=4")
    assert.strictEqual(items.filter((i) => i.type === "file").length, 100_000)
  })

  it("rejects malformed specs", () => {
    for (const bad of ["nope", "files=x", "files=10,depth=99", "files=10,colour=3", "depth=2"]) {
      assert.throws(() => parseLibrarySpec(bad), RangeError, undefined, bad)
    }
    assert.deepStrictEqual(parseLibrarySpec("empty"), { kind: "empty" })
    assert.deepStrictEqual(parseLibrarySpec("files=7"), { kind: "generated", files: 7, depth: 2 })
  })
})
