/**
 * The runner's rounds against the emulator with the production client and a real store fed
 * by the real feed consumer (RemoteSync):
 * - releases own their files: two releases of one name never share a path, and removing one
 *   with its files leaves every byte of the other (the service put them apart, or not);
 * - the service is asked about a download only until it completed there;
 * - a 429 on the creation puts the release back in the queue until its Retry-After; an
 *   account cap is looked at again every minute, not every round.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { RemoteSync } from "../../src/engine/RemoteSync.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { intakeRound } from "../../src/intake/IntakeRunner.ts"
import { CAP_RECHECK_MS } from "../../src/intake/intakeSender.ts"
import { Posters } from "../../src/posters/Posters.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { Store } from "../../src/store/Store.ts"
import { Emulator, freshUser, withClient } from "../contract/harness.ts"
import { tempDir } from "../store/helpers.ts"
import { intakeOverStore, landed } from "./releaseStore.ts"

const HEX_A = "7777456789abcdef0123456789abcdef01234567"
const HEX_B = "8888456789abcdef0123456789abcdef01234567"
const idA = `btih:${HEX_A}` as IntakeId
const idB = `btih:${HEX_B}` as IntakeId
const magnet = (hex: string) => ({
  _tag: "Magnet" as const,
  uri: `magnet:?xt=urn:btih:${hex}&dn=Same.Name.S01&xl=2000`
})

/** One round with `client`, as `run --once` makes it (every download looked at). */
const round = (client: ApiClient["Service"]) => intakeRound(0).pipe(Effect.provideService(ApiClient, client))

/** The feed brought up to date: a full listing into the store, as the daemon's poll makes it. */
const catchUp = (client: ApiClient["Service"]) =>
  RemoteSync.use((sync) => sync.catchUp({ fullListing: true, probeFeed: false })).pipe(
    Effect.provide(RemoteSync.layer.pipe(Layer.provide([Layer.succeed(ApiClient, client), Posters.off])), {
      local: true
    })
  )

/** The user's tree on the emulator: every path, and the download each file came from. */
const serviceTree = (userId: string) =>
  Emulator.useSync((e) => {
    const tree = e.state.user(userId)?.tree
    return [...(tree?.values() ?? [])]
      .map((i) => `${tree?.pathOf(i.id).join("/")}${i.type === "file" ? ` <${i.downloadId ?? "none"}>` : "/"}`)
      .sort()
  })

const complete = (downloadId: string | null) =>
  Emulator.use((e) =>
    Effect.promise(() => fetch(`${e.controlUrl}/downloads/${downloadId}/complete`, { method: "POST" }))
  )

/** GET /downloads/{id} requests the emulator answered since `mark`. */
const followsSince = (mark: number) =>
  Emulator.useSync(
    (e) =>
      e.control
        .requests({ origin: "api" })
        .slice(mark)
        .filter((r) => r.method === "GET" && /^\/api\/v1\/downloads\/[^/?]+$/.test(r.path)).length
  )

const requestCount = Emulator.useSync((e) => e.control.requests({ origin: "api" }).length)

layer(Emulator.layer())("IntakeRunner", (it) => {
  it.effect("two releases of one name get apart; removing one with its files leaves all of the other", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      yield* withClient(user.apiKey, (client) =>
        Effect.gen(function* () {
          const intake = yield* Intake
          const tables = yield* IntakeTables
          yield* intake.add(magnet(HEX_A), { category: "movies", via: "qbittorrent" })
          yield* intake.add(magnet(HEX_B), { category: "movies", via: "qbittorrent" })
          yield* round(client)
          const [a, b] = [Option.getOrThrow(yield* tables.get(idA)), Option.getOrThrow(yield* tables.get(idB))]
          assert.strictEqual(a.directory, "movies")
          assert.strictEqual(b.directory, "movies/Same.Name.S01 (2)")
          yield* complete(a.downloadId)
          yield* complete(b.downloadId)
          const mark = yield* requestCount
          yield* round(client)
          yield* catchUp(client)
          // Completed there: the service is not asked about them again.
          yield* round(client)
          yield* round(client)
          assert.strictEqual(yield* followsSince(mark), 2)

          const [itemA, itemB] = yield* intake.list({ ids: [idA, idB] })
          assert.notStrictEqual(itemA?.contentPath, itemB?.contentPath)
          assert.strictEqual(itemA?.contentPath, "/mnt/media/movies/Same.Name.S01")
          assert.strictEqual(itemB?.contentPath, "/mnt/media/movies/Same.Name.S01 (2)/Same.Name.S01")
          const before = yield* serviceTree(user.userId)
          const ofB = before.filter((p) => p.includes(`<${b.downloadId}>`))
          assert.strictEqual(ofB.length, 3)

          yield* intake.remove([idA], true)
          yield* round(client)
          const after = yield* serviceTree(user.userId)
          assert.deepStrictEqual(
            after.filter((p) => p.includes("<")),
            ofB,
            "every file of the other release is still on the service"
          )
          assert.isFalse(
            after.some((p) => p.startsWith("movies/Same.Name.S01/")),
            "the removed release's own folder went with it"
          )
          assert.strictEqual((yield* intake.list({ ids: [idB] }))[0]?.state, "mirroring")
        })
      ).pipe(Effect.provide(intakeOverStore("/mnt/media")))
    })
  )

  it.effect(
    "a service that puts two downloads in one folder: the release fails with why, and its removal deletes only its own files",
    () =>
      Effect.gen(function* () {
        const user = yield* freshUser
        const root = tempDir("dlsync-intake-root-")
        yield* withClient(user.apiKey, (client) =>
          Effect.gen(function* () {
            const intake = yield* Intake
            const tables = yield* IntakeTables
            // Another client of the account made a download of the same name in the same folder.
            const other = yield* client.downloads.create({ magnet: magnet(HEX_B).uri, directory: "movies" })
            assert.strictEqual(other.kind, "download")
            const otherId = other.kind === "download" ? other.download.id : ""
            yield* complete(otherId)
            yield* intake.add(magnet(HEX_A), { category: "movies", via: "qbittorrent" })
            yield* round(client)
            const a = Option.getOrThrow(yield* tables.get(idA))
            assert.strictEqual(a.directory, "movies", "the store has not seen the other download yet")
            yield* complete(a.downloadId)
            yield* round(client)
            yield* catchUp(client)
            const store = yield* Store
            for (const f of yield* store.releases.filesOf(a.downloadId ?? "")) {
              yield* landed(root, f.remotePath, Option.getOrThrow(yield* store.remote.get(f.remoteId)))
            }
            yield* round(client)
            const [item] = yield* intake.list({ ids: [idA] })
            assert.strictEqual(item?.state, "failed")
            assert.include(item?.reason ?? "", "beside 3 file(s) of another download")

            yield* intake.remove([idA], true)
            yield* round(client)
            const left = yield* serviceTree(user.userId)
            assert.strictEqual(left.filter((p) => p.includes(`<${otherId}>`)).length, 3, "the other download keeps all")
            assert.strictEqual(left.filter((p) => p.includes(`<${a.downloadId}>`)).length, 0)
          })
        ).pipe(Effect.provide(intakeOverStore(root)))
      })
  )

  it.effect("a 429 on the creation: back in the queue until its Retry-After, shown as the time left", () =>
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
          yield* intake.add(magnet(HEX_A), { category: "", via: "qbittorrent" })
          const now = yield* Clock.currentTimeMillis
          yield* round(client)
          const record = Option.getOrThrow(yield* tables.get(idA))
          assert.strictEqual(record.phase, "new")
          assert.strictEqual(record.notBefore, now + 30_000)
          assert.strictEqual(record.heldBy, "rate_limit")
          const item = (yield* intake.list())[0]
          assert.strictEqual(item?.state, "queued")
          assert.strictEqual(item?.etaSeconds, 30)
          yield* TestClock.adjust("10 seconds")
          assert.strictEqual((yield* intake.list())[0]?.etaSeconds, 20)
          yield* round(client)
          assert.isNull(Option.getOrThrow(yield* tables.get(idA)).downloadId, "not due yet")
          yield* TestClock.adjust("20 seconds")
          yield* round(client)
          assert.isNotNull(Option.getOrThrow(yield* tables.get(idA)).downloadId)
        })
      ).pipe(Effect.provide(intakeOverStore("/mnt/media")))
    })
  )

  it.effect("a daily cap: held with the reset time, the account read again every minute, sent once lifted", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const setLimits = (remaining: number) =>
        Effect.promise(() =>
          fetch(`${e.controlUrl}/account`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              user_id: user.userId,
              limits: { daily_downloads: { limit: 5, remaining, resets_at: "2100-01-01T00:00:00Z" } }
            })
          })
        )
      const accountReads = Emulator.useSync(
        (emu) => emu.control.requests({ origin: "api" }).filter((r) => r.path === "/api/v1/account").length
      )
      yield* setLimits(0)
      yield* withClient(user.apiKey, (client) =>
        Effect.gen(function* () {
          const intake = yield* Intake
          const tables = yield* IntakeTables
          yield* intake.add(magnet(HEX_A), { category: "", via: "qbittorrent" })
          yield* round(client)
          const held = Option.getOrThrow(yield* tables.get(idA))
          assert.strictEqual(held.heldBy, "cap")
          assert.include(held.reason ?? "", "daily download limit (5) is used up")
          const reads = yield* accountReads
          yield* round(client)
          yield* round(client)
          assert.strictEqual(yield* accountReads, reads, "not read again within the minute")
          yield* setLimits(3)
          yield* TestClock.adjust(CAP_RECHECK_MS)
          yield* round(client)
          assert.isNotNull(Option.getOrThrow(yield* tables.get(idA)).downloadId, "sent once the cap lifted")
        })
      ).pipe(Effect.provide(intakeOverStore("/mnt/media")))
    })
  )

  it.effect(
    "a selection no policy answers waits for the user's choice, without asking the service again; the choice is sent",
    () =>
      Effect.gen(function* () {
        const user = yield* freshUser
        yield* withClient(user.apiKey, (client) =>
          Effect.gen(function* () {
            const intake = yield* Intake
            const tables = yield* IntakeTables
            yield* intake.add(
              { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX_A}&dn=Pick.select&xl=2000` },
              { category: "tv", via: "qbittorrent" }
            )
            yield* round(client)
            const [waiting] = yield* intake.list({ ids: [idA] })
            assert.strictEqual(waiting?.state, "queued")
            assert.match(waiting?.reason ?? "", /^waiting for a choice: no item matches selection = \["\*\.nomatch"\]/)
            const offered = waiting?.selection?.items ?? []
            assert.isAbove(offered.length, 1)
            const mark = yield* requestCount
            yield* round(client)
            yield* round(client)
            assert.strictEqual(yield* requestCount, mark, "no request while it waits for the user")

            const wrong = yield* Effect.flip(intake.choose(idA, "no-such-item"))
            assert.strictEqual(wrong.reason, "invalid")
            const pick = offered.find((i) => i.selectable) ?? assert.fail("no selectable item")
            yield* intake.choose(idA, pick.itemId)
            yield* round(client)
            const sent = Option.getOrThrow(yield* tables.get(idA))
            assert.strictEqual(sent.phase, "sent")
            assert.isNotNull(sent.downloadId)
            assert.isNull(sent.selectionItems)
            assert.isNull((yield* intake.list({ ids: [idA] }))[0]?.selection)
          })
        ).pipe(Effect.provide(intakeOverStore("/mnt/media", { tv: { selection: ["*.nomatch"], cached_only: false } })))
      })
  )
})
