/**
 * RemoteSync (feed.ts + listing.ts) against the emulator over real HTTP and a real store:
 * pages and cursors, 410 mid-listing, repeated items, the fall back to listing mode, and a
 * listing that fails midway removing nothing.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"
import { RemoteSync } from "../../src/engine/RemoteSync.ts"
import { Posters } from "../../src/posters/Posters.ts"
import { Database } from "../../src/store/Database.ts"
import { Store } from "../../src/store/Store.ts"
import { pollStart } from "../../src/sync/listing.ts"

let emu: RunningEmulator | undefined
const dirs: Array<string> = []
afterEach(async () => {
  await emu?.close()
  emu = undefined
  for (const d of dirs.splice(0)) Fs.rmSync(d, { recursive: true, force: true })
})

const setup = async (files: number) => {
  emu = await startEmulator({ library: "empty", control: true })
  const folder = emu.control.addFolder({ name: "f", parentId: null })
  for (let i = 0; i < files; i++) emu.control.addFile({ name: `n${i}.txt`, parentId: folder.id, sizeBytes: 1 })
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-remotesync-"))
  dirs.push(dir)
  return { emu, dir }
}

/** A fresh RemoteSync over the store in `dir`, authenticated with `token`. */
const layerFor = (e: RunningEmulator, dir: string, token: string) =>
  RemoteSync.layer.pipe(
    Layer.provideMerge(Store.layer),
    Layer.provide(Database.layer(dir)),
    Layer.provide(
      ApiClient.layerLive({ baseUrl: e.baseUrl, authUrl: e.authUrl }).pipe(
        Layer.provide([Credentials.apiKey(Redacted.make(token)), ApiObserver.none])
      )
    ),
    Layer.provide(Posters.off)
  )

const catchUp = (e: RunningEmulator, dir: string, token: string, fullListing = true) =>
  Effect.gen(function* () {
    const sync = yield* RemoteSync
    const store = yield* Store
    const result = yield* sync.catchUp({ fullListing, probeFeed: true })
    return { result, count: yield* store.remote.count, feed: yield* store.feed.state }
  }).pipe(Effect.provide(layerFor(e, dir, token), { local: true }))

describe("RemoteSync", { timeout: 60_000 }, () => {
  it.live("indexes through the feed in pages with their cursor; an idle poll is one request", () =>
    Effect.gen(function* () {
      const { emu, dir } = yield* Effect.promise(() => setup(250))
      const first = yield* catchUp(emu, dir, emu.accessToken)
      assert.strictEqual(first.result.mode, "changes")
      assert.strictEqual(first.result.pages, 3)
      assert.strictEqual(first.count, 251)
      assert.isTrue(first.feed.listingComplete)
      assert.isNotNull(first.feed.cursor)
      const idle = yield* catchUp(emu, dir, emu.accessToken, false)
      assert.strictEqual(idle.result.requests, 1)
      assert.strictEqual(idle.result.upserted, 0)
    })
  )

  it.live("repeated items are harmless; a 410 mid-listing restarts into a new generation", () =>
    Effect.gen(function* () {
      const { emu, dir } = yield* Effect.promise(() => setup(250))
      emu.control.addFault({ kind: "duplicate_items", path: "/api/v1/files/changes", count: 2 })
      // Expire cursors once the first page has been served.
      const seen = emu.control.requests().length
      const expireAfterFirst = setInterval(() => {
        if (emu.control.requests().length > seen) {
          emu.control.expireCursors()
          clearInterval(expireAfterFirst)
        }
      }, 1)
      const result = yield* catchUp(emu, dir, emu.accessToken)
      clearInterval(expireAfterFirst)
      assert.isTrue(
        emu.control.requests().some((r) => r.status === 410),
        "a cursor expired mid-listing"
      )
      assert.strictEqual(result.count, 251)
      assert.isTrue(result.feed.listingComplete)
      assert.isAtLeast(result.feed.generation, 2, "the listing restarted into a new generation")
    })
  )

  it.live("a personal API key falls back to listing; polls add without removing; a full walk removes", () =>
    Effect.gen(function* () {
      const { emu, dir } = yield* Effect.promise(() => setup(120))
      const first = yield* catchUp(emu, dir, emu.apiKey)
      assert.strictEqual(first.result.mode, "listing")
      assert.strictEqual(first.count, 121)
      const victim = [...emu.state.primaryUser.tree.values()].find((i) => i.name === "n5.txt")
      emu.control.remove([victim?.id ?? ""])
      emu.control.addFile({ name: "late.txt", parentId: null, sizeBytes: 2 })
      const poll = yield* catchUp(emu, dir, emu.apiKey, false)
      assert.strictEqual(poll.count, 122, "a poll sees the addition, not the deletion")
      const walk = yield* catchUp(emu, dir, emu.apiKey, true)
      assert.strictEqual(walk.count, 121, "the full walk sees the deletion")
    })
  )

  it.live("a listing that fails midway removes nothing, and resumes", () =>
    Effect.gen(function* () {
      const { emu, dir } = yield* Effect.promise(() => setup(250))
      yield* catchUp(emu, dir, emu.apiKey)
      const victim = [...emu.state.primaryUser.tree.values()].find((i) => i.name === "n7.txt")
      emu.control.remove([victim?.id ?? ""])
      // The second page of the next walk and every retry of it fail.
      let served = 0
      const requestsBefore = emu.control.requests().length
      const failSecond = setInterval(() => {
        served = emu.control.requests().length - requestsBefore
        if (served >= 1) {
          emu.control.addFault({ kind: "status_500", path: "/api/v1/files", probability: 1 })
          clearInterval(failSecond)
        }
      }, 1)
      const failed = yield* Effect.flip(catchUp(emu, dir, emu.apiKey))
      clearInterval(failSecond)
      assert.strictEqual(failed._tag, "ApiError")
      const after = yield* Effect.gen(function* () {
        const store = yield* Store
        return { count: yield* store.remote.count, feed: yield* store.feed.state }
      }).pipe(Effect.provide(Layer.provideMerge(Store.layer, Database.layer(dir)), { local: true }))
      assert.strictEqual(after.count, 251, "nothing removed by the incomplete walk")
      assert.isFalse(after.feed.listingComplete)
      emu.control.clearFaults()
      const resumed = yield* catchUp(emu, dir, emu.apiKey)
      assert.strictEqual(resumed.count, 250)
      assert.isTrue(resumed.feed.listingComplete)
    })
  )

  it("polls start one second before the watermark", () => {
    assert.strictEqual(pollStart("2026-01-01T00:00:10.000Z"), "2026-01-01T00:00:09.000Z")
    assert.isUndefined(pollStart(null))
  })
})
