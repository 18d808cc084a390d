import { assert, describe, it } from "@effect/vitest"
import { mapPath } from "../../src/paths/pathMap.ts"

describe("mapPath", () => {
  it("rewrites the first prefix that holds the path, at a folder boundary", () => {
    const map = [
      ["/srv/media/tv", "/tv"],
      ["/srv/media/", "/media"]
    ] as const
    assert.strictEqual(mapPath(map, "/srv/media/tv/Show/S1"), "/tv/Show/S1")
    assert.strictEqual(mapPath(map, "/srv/media/Movies"), "/media/Movies")
    assert.strictEqual(mapPath(map, "/srv/media"), "/media")
    assert.strictEqual(mapPath(map, "/srv/media2/x"), "/srv/media2/x", "not a folder of /srv/media")
    assert.strictEqual(mapPath([], "/srv/media/x"), "/srv/media/x")
    assert.strictEqual(mapPath([["/", "/data"]], "/srv/x"), "/data/srv/x")
  })
})
