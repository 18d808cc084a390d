/**
 * With a personal API key dlsync mirrors by listing, and sees remote deletions only by a full
 * listing. A small account costs one request to list, so the daemon lists it at every poll:
 * a remote deletion arrives within a poll or two, not after `sync.listing_interval`.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox, seedSmallLibrary, waitUntil } from "./harness.ts"

const POLL_INTERVAL_MS = 1_000

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("daemon in listing mode", { timeout: 120_000 }, () => {
  it("notices a remote deletion within a few polls when the account lists in one request", async () => {
    box = await sandbox()
    const b = box
    const ids = seedSmallLibrary(b.emu)
    const env = { DLSYNC_SYNC_POLL_INTERVAL: `${POLL_INTERVAL_MS}ms` }
    const daemon = b.spawn(["run"], { apiKey: true, env, deadlineMs: 90_000 })
    const alpha = Path.join(b.root, "Movies/alpha.mkv")
    await waitUntil(() => Fs.existsSync(alpha), 45_000, `the first pass\n${daemon.output().stderr}`)

    b.emu.control.remove([ids.get("Movies/alpha.mkv") ?? ""])
    // listing_interval is an hour by default: only the cadence of a cheap listing gets here in time.
    await waitUntil(() => !Fs.existsSync(alpha), 20_000, `the deletion\n${daemon.output().stderr}`)

    const status = JSON.parse((await b.run(["status", "--json"], { apiKey: true, env })).stdout)
    assert.strictEqual(status.mode.name, "listing")
    assert.strictEqual(status.remoteDeletionsNoticedWithinSeconds, POLL_INTERVAL_MS / 1000)
    const text = (await b.run(["status"], { apiKey: true, env })).stdout
    assert.match(text, /remote deletions are noticed within ~1s/)
    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
  })
})
