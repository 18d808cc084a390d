/** The pure parts of the qBittorrent API: path mapping, category names, hashes, the torrent view. */
import { assert, describe, it } from "@effect/vitest"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { categoryProblem } from "../../src/intake/categoryName.ts"
import type { IntakeItem } from "../../src/intake/Intake.ts"
import { toAppPath } from "../../src/paths/pathMap.ts"
import { hashOfId, parseHashes } from "../../src/qbittorrent/hashes.ts"
import { torrentInfo, UNKNOWN_ETA } from "../../src/qbittorrent/torrentView.ts"

describe("toAppPath", () => {
  it("replaces the longest prefix that matches at a segment boundary", () => {
    const map = [
      ["/srv/media", "/data"],
      ["/srv/media/tv", "/tv"],
      ["/srv/med", "/wrong"]
    ] as const
    assert.strictEqual(toAppPath(map, "/srv/media/movies/A"), "/data/movies/A")
    assert.strictEqual(toAppPath(map, "/srv/media/tv/Show"), "/tv/Show")
    assert.strictEqual(toAppPath(map, "/srv/media"), "/data")
    assert.strictEqual(toAppPath(map, "/srv/mediaX/a"), "/srv/mediaX/a")
    assert.strictEqual(toAppPath(map, "/elsewhere"), "/elsewhere")
  })

  it("trailing separators do not matter; a Windows target gets backslashes", () => {
    assert.strictEqual(toAppPath([["/srv/media/", "/data/"]], "/srv/media/a/b"), "/data/a/b")
    assert.strictEqual(toAppPath([["/srv/media", "D:\\Media"]], "/srv/media/tv/S01/e.mkv"), "D:\\Media\\tv\\S01\\e.mkv")
    assert.strictEqual(toAppPath([["/", "/host"]], "/srv"), "/host/srv")
  })
})

describe("categoryProblem", () => {
  it("accepts folder names and subcategories, refuses what leaves the mirror root", () => {
    for (const ok of ["", "tv", "tv-sonarr", "tv/hd", "Movies 4K"]) assert.isUndefined(categoryProblem(ok), ok)
    for (const bad of [
      "..",
      "../x",
      "a/..",
      "./a",
      "/abs",
      "a/",
      "a//b",
      "a\\b",
      "C:x",
      "a\nb",
      "x".repeat(201),
      " a",
      "a /b",
      ".dlsync"
    ]) {
      assert.isString(categoryProblem(bad), bad)
    }
  })
})

describe("parseHashes", () => {
  it("any case, | between several, all; 64-digit (v2) hashes cut to 40; a part that is not a hash names nothing", () => {
    const hex = "AbCdEf0123456789abcdef0123456789ABCDEF01"
    assert.deepStrictEqual(parseHashes(`${hex}|${"1".repeat(64)}`), {
      _tag: "Ids",
      ids: [IntakeId.make(`btih:${hex.toLowerCase()}`), IntakeId.make(`btih:${"1".repeat(40)}`)]
    })
    assert.deepStrictEqual(parseHashes("ALL"), { _tag: "All" })
    assert.deepStrictEqual(parseHashes(`abc|${hex}`), {
      _tag: "Ids",
      ids: [IntakeId.make(`btih:${hex.toLowerCase()}`)]
    })
    assert.strictEqual(hashOfId(IntakeId.make(`sha256:${"a".repeat(64)}`)), undefined)
  })
})

describe("torrentInfo", () => {
  const item: IntakeItem = {
    id: IntakeId.make(`btih:${"a".repeat(40)}`),
    name: "Show",
    category: "tv",
    via: "qbittorrent",
    rate: 0,
    selection: null,
    state: "mirroring",
    reason: null,
    progress: 1,
    size: 1000,
    remaining: 0,
    etaSeconds: null,
    addedAt: 1_000_000,
    completedAt: null,
    expectedStartAt: null,
    savePath: "/m/tv",
    contentPath: "/m/tv/Show",
    downloadId: "d1",
    files: []
  }
  const context = { now: 2_000_000, pathMap: [] }
  const none = { tags: [], facts: { trackers: [] } }

  it("never says progress 1 before the item is completed, and every number is finite", () => {
    const info = torrentInfo(item, none, context)
    assert.isBelow(Number(info?.progress), 1)
    assert.strictEqual(info?.state, "downloading")
    assert.strictEqual(info?.eta, UNKNOWN_ETA)
    assert.strictEqual(info?.completion_on, -1)
    const odd = torrentInfo({ ...item, size: Number.NaN, progress: Number.NaN, etaSeconds: Infinity }, none, context)
    for (const [key, value] of Object.entries(odd ?? {})) {
      if (typeof value === "number") assert.isTrue(Number.isFinite(value), key)
    }
  })

  it("a completed item: stoppedUP, progress 1, nothing left, seeding since completion", () => {
    const info = torrentInfo({ ...item, state: "completed", completedAt: 1_500_000 }, none, context)
    assert.deepStrictEqual(
      [info?.state, info?.progress, info?.amount_left, info?.completion_on, info?.seeding_time, info?.last_activity],
      ["stoppedUP", 1, 0, 1500, 500, 1500]
    )
  })

  it("an item that is not a torrent (an NZB) is not shown", () => {
    assert.isUndefined(torrentInfo({ ...item, id: IntakeId.make(`sha256:${"b".repeat(64)}`) }, none, context))
  })
})
