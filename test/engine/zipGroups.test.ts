import fc from "fast-check"
import { assert, describe, it } from "vitest"
import { planZipJobs, type ZipThresholds } from "../../src/engine/zipGroups.ts"
import type { DownloadAction } from "../../src/sync/executor.ts"
import { archiveNameOf } from "../../src/transfer/zip/archiveName.ts"
import { file } from "../sync/fixtures.ts"

const download = (
  id: string,
  name: string,
  parent: string | null,
  size: number,
  downloadId?: string
): DownloadAction => ({
  _tag: "Download",
  path: `${parent ?? "root"}/${id}`,
  item: file(id, name, parent, { size, ...(downloadId === undefined ? {} : { downloadId }) }),
  replace: null,
  reason: "new on the remote"
})

const thresholds: ZipThresholds = { minFiles: 4, medianBelow: 1000, maxMemberSize: 5000, maxIds: 3 }

const plannedDownloads = fc
  .array(
    fc.record({
      parent: fc.constantFrom(null, "p1", "p2"),
      downloadId: fc.option(fc.constantFrom("d1", "d2"), { nil: undefined }),
      name: fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "a/b", "a_b", "x\\y", "x_y"),
      size: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 4000, max: 6000 }))
    }),
    { maxLength: 40 }
  )
  .map((rows) => rows.map((r, i) => download(`f${i}`, r.name, r.parent, r.size, r.downloadId)))

const groupOf = (a: DownloadAction) =>
  a.item.downloadId === undefined ? `folder:${a.item.parentId}` : `download:${a.item.downloadId}`

describe("planZipJobs", () => {
  it("puts every download in exactly one ZIP job or the per-file list, jobs within the thresholds", () => {
    fc.assert(
      fc.property(plannedDownloads, fc.array(fc.nat(40)), fc.integer({ min: 1, max: 5 }), (downloads, kept, maxIds) => {
        const keep = new Set(kept.map((i) => `f${i}`))
        const t = { ...thresholds, maxIds }
        const plan = planZipJobs(downloads, t, keep)
        const all = [...plan.zips.flat(), ...plan.perFile]
        assert.sameMembers(
          all.map((a) => a.item.id),
          downloads.map((a) => a.item.id)
        )
        assert.strictEqual(new Set(all).size, downloads.length, "nothing twice")
        const byGroup = new Map<string, Array<DownloadAction>>()
        for (const job of plan.zips) {
          assert.isAtLeast(job.length, 1)
          assert.isAtMost(job.length, maxIds)
          const group = groupOf(job[0]!)
          for (const a of job) {
            assert.strictEqual(groupOf(a), group, "a job's files share a group")
            assert.isBelow(a.item.size, t.maxMemberSize)
            assert.isFalse(keep.has(a.item.id), "partial per-file data stays on the per-file path")
          }
          byGroup.set(group, [...(byGroup.get(group) ?? []), ...job])
        }
        for (const [group, zipped] of byGroup) {
          assert.isAtLeast(zipped.length, t.minFiles, group)
          const names = zipped.map((a) => archiveNameOf(a.item.name))
          assert.strictEqual(new Set(names).size, names.length, "archive names are distinct within a group")
          const sizes = zipped.map((a) => a.item.size).sort((x, y) => x - y)
          assert.isBelow(sizes[Math.floor((sizes.length - 1) / 2)]!, t.medianBelow)
          // Evenly split: chunk lengths differ by at most one.
          const lengths = plan.zips.filter((job) => groupOf(job[0]!) === group).map((job) => job.length)
          assert.isAtMost(Math.max(...lengths) - Math.min(...lengths), 1)
        }
        // In plan order.
        const order = new Map(downloads.map((a, i) => [a, i]))
        for (const list of [...plan.zips, plan.perFile]) {
          const positions = list.map((a) => order.get(a)!)
          assert.deepStrictEqual(
            positions,
            [...positions].sort((x, y) => x - y)
          )
        }
      }),
      { numRuns: 500 }
    )
  })

  it("zips a folder of many small files, leaves the large, the clashing names and small groups alone", () => {
    const small = Array.from({ length: 5 }, (_, i) => download(`s${i}`, `s${i}.srt`, "season", 100))
    const big = download("big", "video.mkv", "season", 9000)
    const clash = [download("c1", "a/b", "season", 10), download("c2", "a_b", "season", 10)]
    const lonely = [download("l1", "x", "other", 10), download("l2", "y", "other", 10)]
    const plan = planZipJobs([...small, big, ...clash, ...lonely], { ...thresholds, maxIds: 100 }, new Set())
    assert.deepStrictEqual(
      plan.zips.map((job) => job.map((a) => a.item.id)),
      [["s0", "s1", "s2", "s3", "s4"]]
    )
    assert.deepStrictEqual(
      plan.perFile.map((a) => a.item.id),
      ["big", "c1", "c2", "l1", "l2"]
    )
  })

  it("groups a service download's files across folders, and does nothing when turned off", () => {
    const files = ["p1", "p2", "p1", "p2"].map((parent, i) => download(`f${i}`, `n${i}`, parent, 1, "dl"))
    assert.lengthOf(planZipJobs(files, thresholds, new Set()).zips, 2)
    assert.lengthOf(planZipJobs(files, { ...thresholds, maxIds: 100 }, new Set()).zips, 1)
    const off = planZipJobs(files, { ...thresholds, minFiles: 0 }, new Set())
    assert.deepStrictEqual(off, { zips: [], perFile: files })
    const largeMedian = files.map((a) => download(a.item.id, a.item.name, a.item.parentId, 2000, "dl"))
    assert.lengthOf(planZipJobs(largeMedian, thresholds, new Set()).zips, 0)
  })
})
