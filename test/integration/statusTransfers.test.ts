/**
 * `dlsync status` while a run transfers: the file under way with its bytes and rate, then
 * nothing active once that run is killed (its last snapshot stays in the store, but its
 * process no longer holds the lock), and nothing left behind by a run that ends.
 */
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { contentMismatches, eventually, type Sandbox, sandbox } from "./harness.ts"

const MiB = 1024 * 1024

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

/** Rows in live_transfers, read beside whoever holds the store (WAL allows it). */
const publishedRows = (stateDir: string): unknown => {
  const db = new BetterSqlite3(Path.join(stateDir, "state.db"), { readonly: true })
  try {
    return db.prepare("SELECT count(*) FROM live_transfers").pluck().get()
  } finally {
    db.close()
  }
}

interface ActiveTransfer {
  readonly path: string
  readonly bytes: number
  readonly size: number
  readonly percent: number
  readonly bytesPerSecond: number
}

describe("status: active transfers", { timeout: 180_000 }, () => {
  it("shows the file a run is transferring with bytes and a rate; nothing once the run is killed or done", async () => {
    box = await sandbox()
    const b = box
    const movies = b.emu.control.addFolder({ name: "Movies", parentId: null })
    // 48 MiB at 1 MiB/s: the run is still transferring when it is killed.
    b.emu.control.addFile({ name: "big.mkv", parentId: movies.id, sizeBytes: 48 * MiB })
    const slow = b.spawn(["run", "--once"], {
      env: { DLSYNC_TRANSFERS_BANDWIDTH_LIMIT: "1 MiB/s" },
      deadlineMs: 150_000
    })

    let status: { transfers: { runningPid: number | null; active: Array<ActiveTransfer> } } | undefined
    await eventually(
      async () => {
        const result = await b.run(["status", "--json"])
        // Until the run has created its store, status finds no state there (78) and says so.
        if (result.code !== 0) return false
        status = JSON.parse(result.stdout)
        const active = status?.transfers.active[0]
        return active !== undefined && active.bytes > 0 && active.bytesPerSecond > 0
      },
      "status to show the transfer with bytes and a rate",
      90_000,
      () => `${JSON.stringify(status?.transfers)}\n${slow.output().stderr}`
    )
    assert.strictEqual(status?.transfers.runningPid, slow.child.pid)
    const active = status?.transfers.active ?? []
    assert.strictEqual(active.length, 1)
    assert.strictEqual(active[0]?.path, "Movies/big.mkv")
    assert.strictEqual(active[0]?.size, 48 * MiB)
    assert.isBelow(active[0]?.bytes ?? Infinity, 48 * MiB)
    assert.strictEqual(active[0]?.percent, Math.floor(((active[0]?.bytes ?? 0) * 100) / (48 * MiB)))

    const text = await b.run(["status"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.match(text.stdout, /^transfers: +1 active, 0 done, 0 parked · /m)
    assert.match(text.stdout, /^ {2}Movies\/big\.mkv: .+ MiB\/48\.0 MiB \d+% · .+\/s · ETA /m)

    // Killed: its last snapshot stays in the store, but is not shown as active.
    slow.child.kill("SIGKILL")
    assert.strictEqual((await slow.exit).signal, "SIGKILL")
    assert.strictEqual(publishedRows(b.stateDir), 1)
    const afterKill = JSON.parse((await b.run(["status", "--json"])).stdout)
    assert.deepStrictEqual(afterKill.transfers, {
      runningPid: null,
      updatedAt: null,
      active: [],
      totals: null,
      waitingForSpace: 0
    })
    assert.include((await b.run(["status"])).stdout, "transfers:       none (no dlsync run is active)")

    // A run that ends (here resuming the file, unthrottled) leaves nothing published.
    const resumed = await b.run(["run", "--once"], { deadlineMs: 90_000 })
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
    assert.strictEqual(publishedRows(b.stateDir), 0)
    const done = JSON.parse((await b.run(["status", "--json"])).stdout)
    assert.deepStrictEqual(done.transfers, {
      runningPid: null,
      updatedAt: null,
      active: [],
      totals: null,
      waitingForSpace: 0
    })
  })
})
