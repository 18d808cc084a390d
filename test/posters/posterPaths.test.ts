import { assert, describe, it } from "@effect/vitest"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { folderPosterPath, sidecarPath, wantedPosters } from "../../src/posters/posterPaths.ts"
import { entryOf, file } from "../sync/fixtures.ts"

const video = (id: string, name: string, poster: string | null): RemoteItem => ({
  ...file(id, name),
  kind: "video",
  ...(poster === null ? {} : { posterUrl: poster })
})

describe("poster paths", () => {
  it("sidecar and folder names", () => {
    assert.strictEqual(sidecarPath("Movies/Alpha (2020).mkv"), "Movies/Alpha (2020)-poster.webp")
    assert.strictEqual(sidecarPath("noext"), "noext-poster.webp")
    assert.strictEqual(sidecarPath(".hidden"), ".hidden-poster.webp")
    assert.strictEqual(folderPosterPath("Movies/a.mkv"), "Movies/poster.webp")
    assert.strictEqual(folderPosterPath("a.mkv"), "poster.webp")
  })

  it("only synced videos with a poster; a folder's poster is its first video's; never a mirrored item's path", () => {
    const a = video("a", "b.mkv", "u-a")
    const b = video("b", "a.mkv", "u-b")
    const none = video("c", "c.mkv", null)
    const text = { ...file("t", "t.txt"), kind: "document", posterUrl: "u-t" }
    const taken = file("p", "b-poster.webp")
    const remote = new Map([a, b, none, text, taken].map((i) => [i.id, i]))
    const entries = [
      entryOf(a, "M/b.mkv"),
      entryOf(b, "M/a.mkv"),
      entryOf(none, "M/c.mkv"),
      entryOf(text, "M/t.txt"),
      entryOf(taken, "M/b-poster.webp")
    ]
    assert.deepStrictEqual([...wantedPosters(entries, remote, "sidecar").keys()], ["M/a-poster.webp"])
    assert.deepStrictEqual(
      [...wantedPosters(entries, remote, "folder").values()],
      [{ path: "M/poster.webp", url: "u-b", videoId: b.id }]
    )
    const pending = [{ ...entryOf(b, "M/a.mkv"), state: "pending" as const }]
    assert.strictEqual(wantedPosters(pending, remote, "sidecar").size, 0)
  })
})
