import { assert, describe, it } from "@effect/vitest"
import { toAppPath } from "../../src/paths/pathMap.ts"

describe("toAppPath", () => {
  it("rewrites the longest prefix that holds the path, at a folder boundary", () => {
    const map = [
      ["/srv/media/tv", "/tv"],
      ["/srv/media/", "/media"]
    ] as const
    assert.strictEqual(toAppPath(map, "/srv/media/tv/Show/S1"), "/tv/Show/S1")
    assert.strictEqual(toAppPath(map, "/srv/media/Movies"), "/media/Movies")
    assert.strictEqual(toAppPath(map, "/srv/media"), "/media")
    assert.strictEqual(toAppPath(map, "/srv/media2/x"), "/srv/media2/x", "not a folder of /srv/media")
    assert.strictEqual(toAppPath([], "/srv/media/x"), "/srv/media/x")
    assert.strictEqual(toAppPath([["/", "/data"]], "/srv/x"), "/data/srv/x")
  })
})
