/**
 * The change feed under stress, through the real CLI: cursors that expire or are refused,
 * and processes killed with SIGKILL between and inside pages. After each, a plain
 * `run --once` must leave exactly the tree an uninterrupted run gives.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import {
  contentMismatches,
  expectedTree,
  type Sandbox,
  sandbox,
  seedMany,
  seedSmallLibrary,
  snapshot,
  waitUntil
} from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

/** Bytes the transfer journal records as fsynced, read while the CLI runs (WAL allows it). */
const durableBytes = (stateDir: string): number => {
  const file = Path.join(stateDir, "state.db")
  if (!Fs.existsSync(file)) return 0
  const db = new BetterSqlite3(file, { readonly: true })
  try {
    const row = db.prepare("SELECT coalesce(sum(durable), 0) AS n FROM transfer_segments").get()
    return Number(Reflect.get(Object(row), "n"))
  } catch {
    return 0
  } finally {
    db.close()
  }
}

const changesRequests = (b: Sandbox) =>
  b.emu.control.requests().filter((r) => r.path.startsWith("/api/v1/files/changes"))

describe("change feed", { timeout: 120_000 }, () => {
  it("410 cursor_expired at rest: a full listing, and what it no longer lists is removed", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    box.emu.control.remove([ids.get("Movies/alpha.mkv") ?? ""])
    box.emu.control.addFile({ name: "new.txt", parentId: null, sizeBytes: 99 })
    box.emu.control.expireCursors()

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.isTrue(
      changesRequests(box).some((r) => r.status === 410),
      "the service answered 410"
    )
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
  })

  it("422 on an altered cursor: the cursor is dropped and the feed restarts", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    const db = new BetterSqlite3(Path.join(box.stateDir, "state.db"))
    db.prepare("UPDATE feed_state SET cursor = cursor || 'x' WHERE id = 1").run()
    db.close()
    box.emu.control.addFile({ name: "after-422.txt", parentId: null, sizeBytes: 7 })

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.isTrue(
      changesRequests(box).some((r) => r.status === 422),
      "the service answered 422"
    )
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
  })

  it("SIGKILL between and inside pages, then a cursor expiring mid-listing: the result is the uninterrupted one", async () => {
    box = await sandbox()
    seedMany(box.emu, "many", 420, 16)
    seedSmallLibrary(box.emu)
    const b = box
    // Pages of ~40 KB arrive at 64 KiB/s: each takes long enough to be killed inside.
    b.emu.control.addFault({ kind: "slow", path: "/api/v1/files/changes", probability: 1, bytesPerSecond: 65_536 })
    for (const pagesSeen of [2, 4]) {
      const before = changesRequests(b).length
      const run = b.spawn(["run", "--once"])
      await waitUntil(() => changesRequests(b).length >= before + pagesSeen, 60_000, `${pagesSeen} feed requests`)
      run.child.kill("SIGKILL")
      const killed = await run.exit
      assert.strictEqual(killed.signal, "SIGKILL")
    }
    assert.isTrue(Fs.existsSync(Path.join(b.stateDir, "state.db")))
    b.emu.control.clearFaults()
    b.emu.control.expireCursors()

    const result = await b.run(["run", "--once"], { deadlineMs: 90_000 })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.isTrue(
      changesRequests(b).some((r) => r.status === 410),
      "the resumed listing met 410"
    )
    assert.deepStrictEqual(snapshot(b.root), expectedTree(b.emu))
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
  })

  it("SIGKILL in the middle of downloads, then a restart: every file lands whole, nothing torn in place", async () => {
    box = await sandbox()
    const b = box
    for (const name of ["one.mkv", "two.mkv", "three.mkv"]) {
      b.emu.control.addFile({ name, parentId: null, sizeBytes: 6 * 1024 * 1024 })
    }
    b.emu.control.addFault({ kind: "slow", path: "/dl/**", probability: 1, bytesPerSecond: 1024 * 1024 })
    const run = b.spawn(["run", "--once"])
    await waitUntil(() => durableBytes(b.stateDir) > 0, 60_000, "a durable part of a download")
    run.child.kill("SIGKILL")
    assert.strictEqual((await run.exit).signal, "SIGKILL")
    for (const [path, entry] of Object.entries(snapshot(b.root))) {
      assert.strictEqual(entry.size, 6 * 1024 * 1024, `${path} is whole or absent`)
    }
    b.emu.control.clearFaults()

    const result = await b.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(snapshot(b.root), expectedTree(b.emu))
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
    const resumed = b.emu.control.requests({ origin: "cdn" }).some((r) => /^bytes=[1-9]/.test(r.headers.range ?? ""))
    assert.isTrue(resumed, "a download resumed from its durable offset")
  })
})
