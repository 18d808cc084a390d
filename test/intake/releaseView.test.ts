/**
 * A release as every surface reads it (pure): its state, one progress over both phases that
 * never goes back, the rate and ETA of the phase it is in, and its paths (the file for one
 * file, the root folder for several, never the folder it sits in).
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { FileId } from "../../src/domain/FileId.ts"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { releaseView, type ViewInput } from "../../src/intake/releaseView.ts"
import type { IntakeRecord } from "../../src/store/intakeTables.ts"
import type { ReleaseFile } from "../../src/store/releaseFiles.ts"

const ROOT = "/mnt/media"

const record = (patch: Partial<IntakeRecord> = {}): IntakeRecord => ({
  id: IntakeId.make(`btih:${"a".repeat(40)}`),
  name: "Show.S01",
  category: "tv",
  directory: "tv",
  directoryCategory: "tv",
  via: "qbittorrent",
  sourceKind: "magnet",
  fileName: null,
  source: new Uint8Array(),
  infoHash: "a".repeat(40),
  phase: "sent",
  paused: false,
  reason: null,
  notBefore: null,
  heldBy: null,
  selectionId: null,
  selectionExpiresAt: null,
  selectionItems: null,
  selectionChoice: null,
  downloadId: "dl_1",
  status: "downloading",
  progress: 0,
  size: 1000,
  serviceRate: 0,
  serviceCompletedAt: null,
  addedAt: 1_000,
  completedAt: null,
  contentPath: null,
  updatedAt: 1_000,
  cleanup: null,
  ...patch
})

const file = (id: string, path: string, size: number, local: ReleaseFile["local"] = null): ReleaseFile => ({
  remoteId: FileId.make(id),
  size,
  remotePath: path,
  local
})

const synced = (path: string, size: number): ReleaseFile["local"] => ({ path, state: "synced", writtenSize: size })

const view = (input: Partial<ViewInput> & { record: IntakeRecord }) =>
  releaseView({ files: [], live: new Map(), root: ROOT, now: 10_000, ...input })

describe("releaseView", () => {
  it("downloading on the service: the first half of progress, the service's rate and time left", () => {
    const item = view({ record: record({ progress: 0.5, serviceRate: 100 }) })
    assert.strictEqual(item.state, "downloading")
    assert.strictEqual(item.progress, 0.25)
    assert.strictEqual(item.remaining, 750)
    assert.strictEqual(item.rate, 100)
    assert.strictEqual(item.etaSeconds, 5)
    assert.strictEqual(item.contentPath, `${ROOT}/tv/Show.S01`)
    assert.strictEqual(item.savePath, `${ROOT}/tv`)
  })

  it("mirroring: the second half counts verified files and running transfers, never done before completion", () => {
    const files = [
      file("f1", "tv/Show.S01/a.mkv", 600, synced("tv/Show.S01/a.mkv", 600)),
      file("f2", "tv/Show.S01/Subs/a.srt", 400, { path: "tv/Show.S01/Subs/a.srt", state: "pending", writtenSize: null })
    ]
    const live = new Map([["f2", { bytes: 400, bytesPerSecond: 50 }]])
    const item = view({ record: record({ serviceCompletedAt: 2_000, status: "completed", progress: 1 }), files, live })
    assert.strictEqual(item.state, "mirroring")
    assert.isBelow(item.progress, 1)
    assert.isAbove(item.progress, 0.99)
    assert.strictEqual(item.rate, 50)
    assert.deepStrictEqual(
      item.files.map((f) => [f.name, f.localBytes]),
      [
        ["Show.S01/a.mkv", 600],
        ["Show.S01/Subs/a.srt", 399]
      ]
    )
    assert.strictEqual(item.contentPath, `${ROOT}/tv/Show.S01`)
  })

  it("a single file is its own content path; a folder of its own sits inside its category", () => {
    const single = view({
      record: record({ serviceCompletedAt: 2_000, directory: "tv/X (2)", name: "X.mkv" }),
      files: [file("f1", "tv/X (2)/X.mkv", 10, synced("tv/X (2)/X.mkv", 10))]
    })
    assert.strictEqual(single.contentPath, `${ROOT}/tv/X (2)/X.mkv`)
    assert.strictEqual(single.savePath, `${ROOT}/tv/X (2)`)
    assert.deepStrictEqual(
      single.files.map((f) => f.name),
      ["X.mkv"]
    )
  })

  it("completed: 1, nothing left, at the path fixed when it completed (a later category change moves nothing)", () => {
    const item = view({
      record: record({ completedAt: 5_000, contentPath: "tv/Show.S01", category: "archive", size: 1000 })
    })
    assert.strictEqual(item.state, "completed")
    assert.strictEqual(item.progress, 1)
    assert.strictEqual(item.remaining, 0)
    assert.strictEqual(item.contentPath, `${ROOT}/tv/Show.S01`)
    assert.strictEqual(item.category, "archive")
  })

  it("queued behind a cap: the time until it may go; blocked: failed with the reason", () => {
    const queued = view({ record: record({ phase: "new", notBefore: 70_000, heldBy: "cap", reason: "cap" }) })
    assert.strictEqual(queued.state, "queued")
    assert.strictEqual(queued.etaSeconds, 60)
    const blocked = view({ record: record({ status: "blocked", reason: "blocked by the service: x" }) })
    assert.strictEqual(blocked.state, "failed")
    assert.strictEqual(blocked.reason, "blocked by the service: x")
  })

  it("progress never goes below an earlier reading, whatever the phase and bytes do", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            serviceProgress: fc.double({ min: 0, max: 1, noNaN: true }),
            completedThere: fc.boolean(),
            liveBytes: fc.nat({ max: 1000 })
          }),
          { minLength: 1, maxLength: 20 }
        ),
        (readings) => {
          let floor = 0
          for (const r of readings) {
            const item = view({
              record: record({
                progress: r.serviceProgress,
                serviceCompletedAt: r.completedThere ? 2_000 : null,
                status: r.completedThere ? "completed" : "downloading"
              }),
              files: r.completedThere ? [file("f1", "tv/Show.S01/a.mkv", 1000)] : [],
              live: new Map([["f1", { bytes: r.liveBytes, bytesPerSecond: 1 }]]),
              floor
            })
            assert.isAtLeast(item.progress, floor)
            assert.isBelow(item.progress, 1)
            assert.strictEqual(item.remaining, Math.round(item.size * (1 - item.progress)))
            floor = item.progress
          }
        }
      )
    )
  })
})
