/**
 * The owner's controls over a running daemon, against a real store: a retry asks for a
 * reconcile only for a file the last pass left failed; a held deletion goes ahead only as the
 * owner saw it, once; pause and the bandwidth limit show in the state.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { remoteVersionOf } from "../../src/domain/LocalEntry.ts"
import { DaemonControl } from "../../src/engine/DaemonControl.ts"
import { DaemonRequests } from "../../src/engine/DaemonRequests.ts"
import { runtimeBandwidthLayer } from "../../src/engine/runtimeBandwidth.ts"
import { pausableTransferQueue } from "../../src/engine/transferPause.ts"
import { Database } from "../../src/store/Database.ts"
import { Store } from "../../src/store/Store.ts"
import { TransferQueue } from "../../src/transfer/TransferQueue.ts"
import { fid, file } from "../sync/fixtures.ts"

const controlLayer = (stateDir: string) =>
  DaemonControl.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        pausableTransferQueue.pipe(
          Layer.provide(
            Layer.succeed(
              TransferQueue,
              TransferQueue.of({
                submit: () => Effect.never,
                stats: () => ({ running: 0, queued: 0, waitingForSpace: 0 })
              })
            )
          )
        ),
        runtimeBandwidthLayer({ bandwidth_limit: 0, bandwidth_schedule: [] }),
        DaemonRequests.layer
      )
    ),
    Layer.provideMerge(Store.layer.pipe(Layer.provide(Database.layer(stateDir))))
  )

const entry = (id: string, state: "synced" | "failed") => {
  const item = file(id, `${id}.mkv`)
  return {
    path: item.name,
    remoteId: item.id,
    type: "file" as const,
    written: null,
    remote: remoteVersionOf(item),
    state,
    attempts: state === "failed" ? 3 : 0,
    lastError: state === "failed" ? "CDN said 500 (3 attempts)" : null
  }
}

describe("DaemonControl", () => {
  it.live("retries a failed file, or one the last pass could not place, and nothing else", () =>
    Effect.gen(function* () {
      const control = yield* DaemonControl
      const store = yield* Store
      const requests = yield* DaemonRequests
      yield* store.local.put(entry("bad", "failed"))
      yield* store.local.put(entry("good", "synced"))
      yield* store.passFailures.replace([{ path: "taken.mkv", remoteId: "taken", reason: "path taken by your file" }])

      assert.strictEqual(yield* control.retry(fid("good")), "not failed")
      assert.strictEqual(yield* control.retry(fid("unknown")), "not failed")
      const woken = yield* Effect.forkChild(requests.next)
      assert.strictEqual(yield* control.retry(fid("bad")), "retrying")
      yield* Fiber.join(woken)
      assert.strictEqual(yield* control.retry(fid("taken")), "retrying")
      yield* requests.next
      // A retry is no deletion allowance.
      assert.isFalse(yield* requests.takeDeletionAllowance)
    }).pipe(Effect.provide(controlLayer(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-control-")))))
  )

  it.live("confirms only the held deletion the owner saw, and the allowance serves one reconcile", () =>
    Effect.gen(function* () {
      const control = yield* DaemonControl
      const store = yield* Store
      const requests = yield* DaemonRequests
      assert.strictEqual(yield* control.confirmHeldDeletion({ count: 2, since: "x" }), "nothing held")

      yield* store.held.replace(["a.mkv", "b.mkv"])
      const since = (yield* store.held.list)[0]?.heldAt ?? ""
      assert.strictEqual(yield* control.confirmHeldDeletion({ count: 3, since }), "changed")
      assert.strictEqual(yield* control.confirmHeldDeletion({ count: 2, since: "2001-01-01T00:00:00Z" }), "changed")
      assert.isFalse(yield* requests.takeDeletionAllowance)

      assert.strictEqual(yield* control.confirmHeldDeletion({ count: 2, since }), "confirmed")
      yield* requests.next
      assert.isTrue(yield* requests.takeDeletionAllowance)
      assert.isFalse(yield* requests.takeDeletionAllowance)
    }).pipe(Effect.provide(controlLayer(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-control-")))))
  )

  it.live("pause and a bandwidth limit show in the state until changed", () =>
    Effect.gen(function* () {
      const control = yield* DaemonControl
      assert.deepStrictEqual(yield* control.state, {
        transfersPaused: false,
        bandwidth: { limit: 0, setNow: null, configured: 0 }
      })
      yield* control.pauseTransfers
      yield* control.limitBandwidth({ bytesPerSecond: 1_000_000, until: null })
      assert.deepStrictEqual(yield* control.state, {
        transfersPaused: true,
        bandwidth: { limit: 1_000_000, setNow: { bytesPerSecond: 1_000_000, until: null }, configured: 0 }
      })
      yield* control.resumeTransfers
      yield* control.limitBandwidth(null)
      assert.deepStrictEqual(yield* control.state, {
        transfersPaused: false,
        bandwidth: { limit: 0, setNow: null, configured: 0 }
      })
    }).pipe(Effect.provide(controlLayer(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-control-")))))
  )
})
