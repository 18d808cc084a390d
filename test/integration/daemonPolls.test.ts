/**
 * The daemon keeps following the account while a long reconcile downloads: the feed is
 * polled on schedule during the transfer, and what a poll found then is mirrored as soon as
 * the transfer ends, not a poll interval later. The reconcile, on a fiber of its own, still
 * stops with the daemon.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { contentMismatches, expectedTree, type Sandbox, sandbox, snapshot, waitUntil } from "./harness.ts"

const MiB = 1024 * 1024

/** Short enough to poll a few times during the big transfer. */
const POLL_INTERVAL_MS = 3_000

/**
 * Between the big file landing and the small one landing. Waiting for a wake instead would
 * take at least SETTLE_MS (2 s, the watcher seeing the big file land) or 90 % of the poll
 * interval (2.7 s); reconciling at once takes a link request and a few KiB (≈ 20 ms here),
 * so the bound leaves a loaded CI machine 1.5 s.
 */
const RIGHT_AFTER_MS = 1_500

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

const lastSeq = (b: Sandbox) => b.emu.control.requests().at(-1)?.seq ?? 0

describe("daemon: polls during a long reconcile", { timeout: 120_000 }, () => {
  it("polls the feed while a slow file downloads, then mirrors what it found right after", async () => {
    box = await sandbox()
    const b = box
    // 8 MiB at 1 MiB/s (the CDN paces this file only): the first pass downloads for ~8 s.
    const big = b.emu.control.addFile({ name: "big.mkv", parentId: null, sizeBytes: 8 * MiB })
    b.emu.control.addFault({ kind: "slow", path: `/dl/${big.id}/**`, probability: 1, bytesPerSecond: MiB })
    const daemon = b.spawn(["run"], {
      env: { DLSYNC_SYNC_POLL_INTERVAL: `${POLL_INTERVAL_MS}ms` },
      deadlineMs: 90_000
    })
    const bigPath = Path.join(b.root, "big.mkv")
    const smallPath = Path.join(b.root, "small.txt")

    await waitUntil(
      () => b.emu.control.requests({ origin: "cdn" }).some((r) => r.path.startsWith(`/dl/${big.id}/`)),
      45_000,
      "the big transfer to start"
    )
    const addedAfter = lastSeq(b)
    b.emu.control.addFile({ name: "small.txt", parentId: null, sizeBytes: 4_096 })
    assert.isFalse(Fs.existsSync(bigPath), "the big transfer is still in flight")

    await waitUntil(() => Fs.existsSync(bigPath), 60_000, `the big file\n${daemon.output().stderr}`)
    const bigLandedAt = Date.now()
    const seenBy = lastSeq(b)
    await waitUntil(() => Fs.existsSync(smallPath), 30_000, `the small file\n${daemon.output().stderr}`)
    const smallLandedAt = Date.now()

    const pollsDuringTransfer = b.emu.control
      .requests({ origin: "api", afterSeq: addedAfter })
      .filter((r) => r.seq <= seenBy && r.path.startsWith("/api/v1/files/changes"))
    assert.isAtLeast(pollsDuringTransfer.length, 1, "the feed was polled while the big file downloaded")
    assert.isBelow(
      smallLandedAt - bigLandedAt,
      RIGHT_AFTER_MS,
      "the small file, found by a poll during the transfer, is mirrored right after it"
    )
    assert.deepStrictEqual(snapshot(b.root), expectedTree(b.emu))
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])

    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
  })

  it("SIGTERM during the slow transfer stops the reconcile with the daemon: exit 0, nothing torn in place", async () => {
    box = await sandbox()
    const b = box
    const big = b.emu.control.addFile({ name: "big.mkv", parentId: null, sizeBytes: 8 * MiB })
    b.emu.control.addFault({ kind: "slow", path: `/dl/${big.id}/**`, probability: 1, bytesPerSecond: MiB })
    const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: `${POLL_INTERVAL_MS}ms` }, deadlineMs: 60_000 })
    await waitUntil(
      () => b.emu.control.requests({ origin: "cdn" }).some((r) => r.path.startsWith(`/dl/${big.id}/`)),
      45_000,
      "the big transfer to start"
    )

    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.isFalse(Fs.existsSync(Path.join(b.root, "big.mkv")), "no partial file at the mirror path")
    assert.isFalse(Fs.existsSync(Path.join(b.stateDir, "dlsync.lock")), "lock released")
  })
})
