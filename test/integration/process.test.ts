/**
 * The process contract: the daemon (SIGHUP polls, SIGTERM exits 0 in time), one instance
 * per state dir, the big-delete guard, an unmounted root, and the exit codes cron and
 * systemd act on.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { expectedTree, type Sandbox, sandbox, seedMany, seedSmallLibrary, snapshot, waitUntil } from "./harness.ts"

let box: Sandbox | undefined

/** The store's locally deleted paths, read while the daemon holds it (WAL allows it). */
const locallyDeleted = (stateDir: string): Array<string> => {
  const db = new BetterSqlite3(Path.join(stateDir, "state.db"), { readonly: true })
  try {
    return db
      .prepare("SELECT path FROM locally_deleted")
      .all()
      .map((row) => String(Reflect.get(Object(row), "path")))
  } finally {
    db.close()
  }
}
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("process", { timeout: 120_000 }, () => {
  it("daemon: mirrors, polls on SIGHUP, refuses a second instance (75), exits 0 on SIGTERM within 10 s", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1h" }, deadlineMs: 90_000 })
    await waitUntil(() => Fs.existsSync(Path.join(b.root, "readme.txt")), 45_000, "the first pass")
    await waitUntil(
      () => JSON.stringify(snapshot(b.root)) === JSON.stringify(expectedTree(b.emu)),
      20_000,
      "full mirror"
    )

    // status reads the store while the daemon holds the lock.
    const status = JSON.parse((await b.run(["status", "--json"])).stdout)
    assert.strictEqual(status.mode.name, "changes")
    assert.strictEqual(status.entries.synced, Object.keys(expectedTree(b.emu)).length)
    assert.isNotNull(status.lastPollAt)

    const second = await b.run(["run", "--once"])
    assert.strictEqual(second.code, 75, second.stderr)
    assert.include(second.stderr, `pid ${daemon.child.pid}`)

    b.emu.control.addFile({ name: "polled.txt", parentId: null, sizeBytes: 5 })
    daemon.child.kill("SIGHUP")
    await waitUntil(() => Fs.existsSync(Path.join(b.root, "polled.txt")), 20_000, "the SIGHUP poll")

    // A deletion under the root is seen by the watcher, without a poll.
    Fs.rmSync(Path.join(b.root, "Movies/beta.mkv"))
    await waitUntil(() => locallyDeleted(b.stateDir).includes("Movies/beta.mkv"), 20_000, "the watcher")

    const stoppedAt = Date.now()
    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.isBelow(Date.now() - stoppedAt, 10_000)
    assert.isFalse(Fs.existsSync(Path.join(b.stateDir, "dlsync.lock")), "lock released")
  })

  it("holds a big delete (exit 1, nothing removed, in status) until --allow-big-delete", async () => {
    box = await sandbox()
    const folder = seedMany(box.emu, "bulk", 60, 8)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    box.emu.control.remove([folder])

    const held = await box.run(["run", "--once"])
    assert.strictEqual(held.code, 1, held.stderr)
    assert.include(held.stderr, "big delete")
    assert.strictEqual(Fs.readdirSync(Path.join(box.root, "bulk")).length, 60, "nothing removed")
    const status = JSON.parse((await box.run(["status", "--json"])).stdout)
    assert.strictEqual(status.heldDelete.count, 60)

    const allowed = await box.run(["run", "--once", "--allow-big-delete"])
    assert.strictEqual(allowed.code, 0, allowed.stderr)
    assert.deepStrictEqual(snapshot(box.root), {})
    const after = JSON.parse((await box.run(["status", "--json"])).stdout)
    assert.isNull(after.heldDelete)
  })

  it("stops with 78 when the root looks unmounted, and deletes nothing", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    const elsewhere = Path.join(box.dir, "unmounted")
    Fs.renameSync(box.root, elsewhere)
    Fs.mkdirSync(box.root) // an empty mount point

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 78, result.stderr)
    assert.include(result.stderr, "marker")
    Fs.rmdirSync(box.root)
    const missing = await box.run(["run", "--once"])
    assert.strictEqual(missing.code, 78, missing.stderr)
    assert.include(missing.stderr, "does not exist")
    Fs.mkdirSync(box.root)
    assert.deepStrictEqual(Fs.readdirSync(box.root), [], "the empty mount point is not filled")
    assert.deepStrictEqual(snapshot(elsewhere), expectedTree(box.emu))
  })

  it("exit codes: 77 for a refused credential, 75 for an unreachable service, 64 for usage", async () => {
    box = await sandbox()
    const auth = await box.run(["run", "--once"], { env: { DLSYNC_SERVICE_API_KEY: "not-a-valid-key" } })
    assert.strictEqual(auth.code, 77, auth.stderr)
    const unreachable = await box.run(["run", "--once"], {
      env: { DLSYNC_SERVICE_BASE_URL: "http://127.0.0.1:9/api/v1" }
    })
    assert.strictEqual(unreachable.code, 75, unreachable.stderr)
    const usage = await box.run(["run", "--allow-big-delete"])
    assert.strictEqual(usage.code, 64, usage.stderr)
  })
})
