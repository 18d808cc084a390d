/**
 * The `transfers` section of `dlsync status`: what a published snapshot shows, when it is
 * not trusted (its publisher no longer holds the lock, or stopped publishing), and how it
 * reads, alone and inside the whole status document.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { renderStatus, statusDocument } from "../../src/engine/statusDocument.ts"
import { renderTransfers, transfersStatus } from "../../src/engine/transfersStatus.ts"
import { acquireInstanceLock } from "../../src/store/instanceLock.ts"
import { LIVE_TRANSFERS_MAX_AGE_MS, type LiveTransfers } from "../../src/store/liveTransfers.ts"
import { Store } from "../../src/store/Store.ts"
import { tempDir, withStore } from "../store/helpers.ts"
import { statusSettings } from "./statusFixtures.ts"

const MiB = 1024 * 1024
const at = Date.parse("2024-05-06T07:08:09.000Z")

const live: LiveTransfers = {
  pid: 4242,
  waitingForSpace: 0,
  updatedAt: "2024-05-06T07:08:09.000Z",
  completed: 3,
  parked: 1,
  bytesPerSecond: 2 * MiB,
  files: [
    {
      fileId: "f1",
      path: "Movies/big.mkv",
      size: 40 * MiB,
      bytes: 10 * MiB,
      bytesPerSecond: 1.5 * MiB,
      connections: 6,
      attempts: 2
    },
    { fileId: "f2", path: "TV/e01.mkv", size: 8 * MiB, bytes: 2 * MiB, bytesPerSecond: 0 }
  ]
}

describe("transfersStatus", () => {
  it("shows each active file with bytes, percent, rate and ETA, and their totals", () => {
    const status = transfersStatus(Option.some(live), 4242, at + 900)
    assert.strictEqual(status.runningPid, 4242)
    assert.strictEqual(status.updatedAt, live.updatedAt)
    assert.deepStrictEqual(status.active, [
      {
        path: "Movies/big.mkv",
        fileId: "f1",
        bytes: 10 * MiB,
        size: 40 * MiB,
        percent: 25,
        bytesPerSecond: 1.5 * MiB,
        etaSeconds: 20,
        connections: 6,
        attempts: 2
      },
      {
        path: "TV/e01.mkv",
        fileId: "f2",
        bytes: 2 * MiB,
        size: 8 * MiB,
        percent: 25,
        bytesPerSecond: 0,
        etaSeconds: null,
        connections: 0,
        attempts: 0
      }
    ])
    assert.deepStrictEqual(status.totals, {
      active: 2,
      completed: 3,
      parked: 1,
      bytes: 12 * MiB,
      size: 48 * MiB,
      percent: 25,
      bytesPerSecond: 2 * MiB,
      etaSeconds: 18
    })
  })

  it("shows nothing active when no process holds the lock, another one does, or the snapshot is stale", () => {
    const none = { updatedAt: null, active: [], waitingForSpace: 0, totals: null }
    assert.deepStrictEqual(transfersStatus(Option.some(live), undefined, at), { runningPid: null, ...none })
    assert.deepStrictEqual(transfersStatus(Option.some(live), 77, at), { runningPid: 77, ...none })
    assert.deepStrictEqual(transfersStatus(Option.some(live), 4242, at + LIVE_TRANSFERS_MAX_AGE_MS + 1), {
      runningPid: 4242,
      ...none
    })
    assert.deepStrictEqual(transfersStatus(Option.some({ ...live, updatedAt: "garbage" }), 4242, at), {
      runningPid: 4242,
      ...none
    })
    assert.deepStrictEqual(transfersStatus(Option.none(), 4242, at), { runningPid: 4242, ...none })
    assert.strictEqual(transfersStatus(Option.some(live), 4242, at + LIVE_TRANSFERS_MAX_AGE_MS).active.length, 2)
  })

  it("says when files wait for disk space, with or without others under way", () => {
    const waiting = { ...live, files: [], waitingForSpace: 2 }
    assert.strictEqual(transfersStatus(Option.some(waiting), 4242, at).waitingForSpace, 2)
    assert.deepStrictEqual(renderTransfers(transfersStatus(Option.some(waiting), 4242, at)), [
      "transfers:       PAUSED: 2 file(s) wait for free disk space (transfers.min_free_space)"
    ])
    const both = renderTransfers(transfersStatus(Option.some({ ...live, waitingForSpace: 1 }), 4242, at))
    assert.strictEqual(
      both[0],
      "transfers:       PAUSED: 1 file(s) wait for free disk space (transfers.min_free_space)"
    )
    assert.match(both[1] ?? "", /^transfers: +2 active/)
  })

  it("renders a totals line and a line per file, or says that nothing runs", () => {
    assert.deepStrictEqual(renderTransfers(transfersStatus(Option.some(live), 4242, at)), [
      "transfers:       2 active, 3 done, 1 parked · 12.0 MiB/48.0 MiB 25% · 2.0 MiB/s · ETA 00:18 (dlsync pid 4242)",
      "  Movies/big.mkv: 10.0 MiB/40.0 MiB 25% · 1.5 MiB/s · ETA 00:20 · 6 connections",
      "  TV/e01.mkv: 2.0 MiB/8.0 MiB 25% · 0 B/s · ETA --:--"
    ])
    const waiting: LiveTransfers = {
      ...live,
      files: [{ ...live.files[1]!, bytesPerSecond: 0, rateLimitedUntil: "2024-05-06T07:10:09.000Z" }]
    }
    assert.deepStrictEqual(renderTransfers(transfersStatus(Option.some(waiting), 4242, at)).slice(1), [
      "  TV/e01.mkv: 2.0 MiB/8.0 MiB 25% · waiting for the service's rate limit until 2024-05-06T07:10:09Z"
    ])
    assert.deepStrictEqual(renderTransfers(transfersStatus(Option.none(), 4242, at)), [
      "transfers:       none under way (dlsync pid 4242 is running)"
    ])
    assert.deepStrictEqual(renderTransfers(transfersStatus(Option.some(live), undefined, at)), [
      "transfers:       none (no dlsync run is active)"
    ])
  })
})

describe("statusDocument: transfers", () => {
  it.live("shows what this state dir's lock holder published, and nothing once it lets go of the lock", () =>
    Effect.gen(function* () {
      const stateDir = tempDir()
      const settings = yield* statusSettings(stateDir)
      yield* withStore(
        stateDir,
        Effect.gen(function* () {
          const store = yield* Store
          yield* Effect.scoped(
            Effect.gen(function* () {
              yield* acquireInstanceLock(stateDir)
              const waitingUntil = "2024-05-06T07:10:09.000Z"
              yield* store.liveTransfers.publish({
                ...live,
                files: [live.files[0]!, { ...live.files[1]!, rateLimitedUntil: waitingUntil }],
                pid: process.pid,
                updatedAt: new Date().toISOString()
              })
              const doc = yield* statusDocument(store, settings)
              assert.strictEqual(doc.transfers.runningPid, process.pid)
              assert.deepStrictEqual(
                doc.transfers.active.map((f) => [f.path, f.bytes, f.percent]),
                [
                  ["Movies/big.mkv", 10 * MiB, 25],
                  ["TV/e01.mkv", 2 * MiB, 25]
                ]
              )
              const text = renderStatus(doc)
              assert.include(text, "transfers:       2 active, 3 done, 1 parked · 12.0 MiB/48.0 MiB 25%")
              assert.include(text, "  Movies/big.mkv: 10.0 MiB/40.0 MiB 25% · 1.5 MiB/s")
              // A file waiting for the service's rate limit says so, and until when (text and JSON).
              assert.include(text, "  TV/e01.mkv: 2.0 MiB/8.0 MiB 25% · waiting for the service's rate limit until")
              assert.strictEqual(doc.transfers.active[1]?.rateLimitedUntil, waitingUntil)
              assert.isUndefined(doc.transfers.active[0]?.rateLimitedUntil)
            })
          )
          // The row is still there (as a killed run would leave it), but nobody holds the lock.
          const doc = yield* statusDocument(store, settings)
          assert.deepStrictEqual(doc.transfers, {
            runningPid: null,
            updatedAt: null,
            active: [],
            waitingForSpace: 0,
            totals: null
          })
          assert.include(renderStatus(doc), "transfers:       none (no dlsync run is active)")
        })
      )
    })
  )
})
