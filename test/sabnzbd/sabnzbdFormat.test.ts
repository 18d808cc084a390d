import { assert, describe, it } from "@effect/vitest"
import { toAppPath } from "../../src/intake/pathMap.ts"
import { formatTimeLeft, megabytes } from "../../src/sabnzbd/sabnzbdFormat.ts"

describe("SABnzbd formats", () => {
  it("timeleft is H:MM:SS under a day and D:HH:MM:SS from a day on, as SABnzbd's format_time_left", () => {
    assert.strictEqual(formatTimeLeft(0), "0:00:00")
    assert.strictEqual(formatTimeLeft(-5), "0:00:00")
    assert.strictEqual(formatTimeLeft(59), "0:00:59")
    assert.strictEqual(formatTimeLeft(3600 + 61), "1:01:01")
    assert.strictEqual(formatTimeLeft(86399), "23:59:59")
    assert.strictEqual(formatTimeLeft(86400), "1:00:00:00")
    assert.strictEqual(formatTimeLeft(10 * 86400 + 3 * 3600 + 4 * 60 + 5.9), "10:03:04:05")
  })

  it("mb and mbleft are MiB with two decimals", () => {
    assert.strictEqual(megabytes(0), "0.00")
    assert.strictEqual(megabytes(1024 * 1024 * 1.5), "1.50")
    assert.strictEqual(megabytes(-1), "0.00")
  })
})

describe("path_map", () => {
  it("replaces the longest local prefix on whole segments, and leaves other paths alone", () => {
    const map = [
      ["/srv/dlsync", "/data"],
      ["/srv/dlsync/tv/", "/tv"]
    ] as const
    assert.strictEqual(toAppPath(map, "/srv/dlsync"), "/data")
    assert.strictEqual(toAppPath(map, "/srv/dlsync/movies/Film"), "/data/movies/Film")
    assert.strictEqual(toAppPath(map, "/srv/dlsync/tv/Show"), "/tv/Show")
    assert.strictEqual(toAppPath(map, "/srv/dlsync2/x"), "/srv/dlsync2/x")
    assert.strictEqual(toAppPath([], "/srv/dlsync/x"), "/srv/dlsync/x")
    assert.strictEqual(toAppPath([["/srv", "/"]], "/srv/a"), "/a")
  })
})
