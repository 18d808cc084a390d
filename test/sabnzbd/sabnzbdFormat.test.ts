import { assert, describe, it } from "@effect/vitest"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import type { IntakeItem, IntakeState } from "../../src/intake/Intake.ts"
import { toAppPath } from "../../src/paths/pathMap.ts"
import * as Format from "../../src/sabnzbd/sabnzbdFormat.ts"

const { formatTimeLeft, historySlot, isQueued, megabytes, nzoIdOf, queueSlot, toUnits } = Format

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

describe("intake states as SABnzbd statuses", () => {
  const item = (state: IntakeState): IntakeItem => ({
    id: IntakeId.make(`btih:${"ab".repeat(20)}`),
    name: "Show",
    category: "",
    via: "sabnzbd",
    rate: 0,
    selection: null,
    state,
    reason: state === "failed" ? "expired before it was selected" : null,
    progress: 0.5,
    size: 100,
    remaining: 50,
    etaSeconds: 3700,
    addedAt: 1_000,
    completedAt: state === "completed" || state === "failed" ? 9_000 : null,
    expectedStartAt: null,
    savePath: "/srv/dlsync",
    contentPath: "/srv/dlsync/Show",
    downloadId: null,
    files: []
  })

  const NORMAL = { priority: 0, nzbSize: 0 }

  it("before the service knows a size, the NZB's own size is shown; the priority the app set is named", () => {
    const unknown = { ...item("queued"), size: 0, remaining: 0 }
    const slot = queueSlot(unknown, 0, { priority: 1, nzbSize: 3 * 1024 * 1024 })
    assert.deepStrictEqual([slot.mb, slot.mbleft, slot.percentage, slot.priority], ["3.00", "3.00", "0", "High"])
    assert.deepStrictEqual([slot.size, slot.sizeleft], ["3.0 MB", "3.0 MB"])
  })

  it("to_units: K/M/G steps of 1024, one decimal from M on", () => {
    assert.deepStrictEqual(
      [toUnits(0), toUnits(1023, "B"), toUnits(1536, "B"), toUnits(5 * 1024 ** 2), toUnits(1.5 * 1024 ** 3, "B")],
      ["0 ", "1023 B", "2 KB", "5.0 M", "1.5 GB"]
    )
  })

  it("queued → Queued, paused → Paused, downloading and mirroring → Downloading, in the queue", () => {
    const statuses = (["queued", "paused", "downloading", "mirroring"] as const).map((state) => {
      assert.isTrue(isQueued(item(state)))
      return queueSlot(item(state), 0, NORMAL).status
    })
    assert.deepStrictEqual(statuses, ["Queued", "Paused", "Downloading", "Downloading"])
    assert.strictEqual(queueSlot(item("downloading"), 0, NORMAL).timeleft, "1:01:40")
    assert.strictEqual(queueSlot(item("paused"), 0, NORMAL).timeleft, "0:00:00")
    assert.strictEqual(queueSlot(item("queued"), 0, NORMAL).cat, "*", "no category is SABnzbd's *")
  })

  it("completed → Completed and failed → Failed with its reason, in the history, under the same nzo_id", () => {
    const completed = historySlot(item("completed"), [])
    const failed = historySlot(item("failed"), [])
    assert.isFalse(isQueued(item("completed")))
    assert.isFalse(isQueued(item("failed")))
    assert.deepStrictEqual([completed.status, completed.fail_message], ["Completed", ""])
    assert.deepStrictEqual([failed.status, failed.fail_message], ["Failed", "expired before it was selected"])
    assert.strictEqual(completed.nzo_id, queueSlot(item("queued"), 0, NORMAL).nzo_id)
    assert.strictEqual(nzoIdOf(item("queued").id), `SABnzbd_nzo_${"ab".repeat(20)}`)
    assert.strictEqual(completed.storage, "/srv/dlsync/Show")
  })
})
