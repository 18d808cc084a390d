/**
 * The runner's rounds against the emulator with the production client: a removal owes the
 * service its download record (and with deleteFiles its files) until a round pays it; a
 * 429 on the creation puts the intake back in the queue with the reason and the time it
 * may go, never failed.
 */
import * as Path from "node:path"
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { DEFAULT_TIMINGS, type DownloadTimings } from "../../src/emulator/downloadLifecycle.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { IntakeLive } from "../../src/intake/IntakeLive.ts"
import { FOLLOW_INTERVAL_MS, intakeRound } from "../../src/intake/IntakeRunner.ts"
import { IntakeSettings } from "../../src/intake/IntakeSettings.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { Emulator, freshUser, withClient } from "../contract/harness.ts"
import { storeLayer, tempDir } from "../store/helpers.ts"

const HEX = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const id = `btih:${HEX}` as IntakeId

const intakeLayer = () =>
  IntakeLive.pipe(
    Layer.provideMerge(IntakeTables.layer),
    Layer.provideMerge(storeLayer(Path.join(tempDir(), "state"))),
    Layer.provideMerge(IntakeSettings.layer({ root: "/nonexistent", categories: {} }))
  )

/** One round with `client`; counts the wake-ups it asked for. */
const round = (client: ApiClient["Service"]) =>
  Effect.gen(function* () {
    let woken = 0
    yield* intakeRound(Effect.sync(() => void woken++)).pipe(Effect.provideService(ApiClient, client))
    return woken
  })

layer(Emulator.layer())("IntakeRunner", (it) => {
  it.effect("remove with deleteFiles: the service's files and download record go; without: only the record", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      yield* withClient(user.apiKey, (client) =>
        Effect.gen(function* () {
          const intake = yield* Intake
          const tables = yield* IntakeTables
          yield* intake.add(
            { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX}&dn=Gone&xl=1000` },
            { category: "tv", via: "t" }
          )
          const url = { _tag: "Url", url: "https://files.example.com/Kept.mkv?size=10" } as const
          const kept = yield* intake.add(url, { category: "tv", via: "t" })
          assert.strictEqual(yield* round(client), 0)
          const sent = (yield* intake.list()).map((i) => i.downloadId)
          assert.isTrue(sent.every((d) => d !== null))
          for (const d of sent)
            yield* Effect.promise(() => fetch(`${e.controlUrl}/downloads/${d}/complete`, { method: "POST" }))
          // A download is looked at on the service every FOLLOW_INTERVAL_MS at most.
          assert.strictEqual(yield* round(client), 0)
          yield* TestClock.adjust(FOLLOW_INTERVAL_MS)
          assert.strictEqual(yield* round(client), 1, "the files became known: a reconcile is asked for")
          const gone = Option.getOrThrow(yield* tables.get(id))
          assert.strictEqual(gone.files?.length, 3)
          assert.isNotNull(gone.fileId)
          assert.deepStrictEqual(
            gone.files?.map((f) => f.path).sort(),
            ["Gone/Gone.mkv", "Gone/Gone.en.srt", "Gone/Gone.sample.mkv"].sort()
          )

          yield* intake.remove([id], true)
          yield* intake.remove([kept.id], false)
          assert.strictEqual(yield* round(client), 1, "files deleted on the service: a reconcile is asked for")
          const tree = e.state.user(user.userId)?.tree
          const names = [...(tree?.values() ?? [])].map((i) => tree?.pathOf(i.id).join("/")).sort()
          assert.deepStrictEqual(names, ["tv", "tv/Kept.mkv"])
          const left = yield* Effect.promise(
            async () =>
              (await (await fetch(`${e.controlUrl}/downloads`)).json()) as { data: Array<{ user_id: string }> }
          )
          assert.deepStrictEqual(
            left.data.filter((d) => d.user_id === user.userId),
            []
          )
          assert.deepStrictEqual(yield* tables.owingCleanup, [])
        })
      ).pipe(Effect.provide(intakeLayer()))
    })
  )

  it.effect("a download the service answers completed (a cached torrent): its files are read in the same round", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const timings = (t: DownloadTimings) =>
        Effect.promise(() =>
          fetch(`${e.controlUrl}/downloads/timings`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              processing_ms: t.processingMs,
              downloading_ms: t.downloadingMs,
              finalizing_ms: t.finalizingMs
            })
          })
        )
      // The service completes it as it is created, as it does a cached torrent.
      yield* Effect.acquireRelease(timings({ processingMs: 0, downloadingMs: 0, finalizingMs: 0 }), () =>
        timings(DEFAULT_TIMINGS)
      )
      yield* withClient(user.apiKey, (client) =>
        Effect.gen(function* () {
          const intake = yield* Intake
          const tables = yield* IntakeTables
          yield* intake.add(
            { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX}&dn=Cached&xl=1000` },
            { category: "tv", via: "t" }
          )
          // No FOLLOW_INTERVAL_MS wait: nothing is left to wait for on the service.
          assert.strictEqual(yield* round(client), 1, "the files became known: a reconcile is asked for")
          const record = Option.getOrThrow(yield* tables.get(id))
          assert.strictEqual(record.status, "completed")
          assert.strictEqual(record.files?.length, 3)
        })
      ).pipe(Effect.provide(intakeLayer()))
    }).pipe(Effect.scoped)
  )

  it.effect("a 429 on the creation: back in the queue with the reason and when it may go", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({
        kind: "status_429",
        path: "/api/v1/downloads",
        method: "POST",
        count: 1,
        retryAfterSeconds: 30
      })
      yield* withClient(user.apiKey, (client) =>
        Effect.gen(function* () {
          const intake = yield* Intake
          const tables = yield* IntakeTables
          yield* intake.add(
            { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX}&dn=Limited` },
            { category: "", via: "t" }
          )
          const now = yield* Clock.currentTimeMillis
          yield* round(client)
          const record = Option.getOrThrow(yield* tables.get(id))
          assert.strictEqual(record.phase, "new")
          assert.strictEqual(record.notBefore, now + 30_000)
          assert.strictEqual(
            record.reason,
            `rate limited by the service (429); retrying at ${new Date(now + 30_000).toISOString()}`
          )
          const item = (yield* intake.list())[0]
          assert.strictEqual(item?.state, "queued")
          assert.strictEqual(item?.expectedStartAt, now + 30_000)
          // The apps show the wait as the time left.
          assert.strictEqual(item?.etaSeconds, 30)
          yield* TestClock.adjust("10 seconds")
          assert.strictEqual((yield* intake.list())[0]?.etaSeconds, 20)
          // Not due yet: nothing is sent at the next round.
          yield* round(client)
          assert.isNull(Option.getOrThrow(yield* tables.get(id)).downloadId)
        })
      ).pipe(Effect.provide(intakeLayer()))
    })
  )
})
