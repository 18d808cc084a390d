/**
 * The one meaning of "complete", over a real store and real files: the service completed
 * the download, a catch-up that started after that reached the feed's head, and every file
 * is on disk as dlsync wrote it; the content root then holds it and nothing of another
 * download's, or the release fails saying why.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { settleCompletion } from "../../src/intake/releaseCompletion.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { Store } from "../../src/store/Store.ts"
import { tempDir } from "../store/helpers.ts"
import { folder, intakeOverStore, landed, remoteFile, seedRemote } from "./releaseStore.ts"

const HEX = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const id = `btih:${HEX}` as IntakeId
const SERVICE_DONE = Date.parse("2026-03-01T00:00:00Z")

/** A release sent and completed on the service at SERVICE_DONE, with files f1, f2 in tv/Show. */
const completedThere = (extra: ReadonlyArray<ReturnType<typeof remoteFile>> = []) =>
  Effect.gen(function* () {
    const intake = yield* Intake
    const tables = yield* IntakeTables
    yield* intake.add({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX}&dn=Show` }, { category: "tv", via: "cli" })
    yield* tables.update(
      id,
      ["new"],
      { phase: "sent", downloadId: "dl_1", status: "completed", serviceCompletedAt: SERVICE_DONE },
      SERVICE_DONE
    )
    const files = [remoteFile("f1", "r", "Show.mkv", 30, "dl_1"), remoteFile("f2", "r", "Show.srt", 5, "dl_1")]
    // Seeded with no catch-up recorded yet: each test says when the store caught up.
    return { files, seed: seedRemote([folder("c", null, "tv"), folder("r", "c", "Show"), ...files, ...extra], "") }
  })

const settle = (root: string) =>
  Effect.gen(function* () {
    const store = yield* Store
    const tables = yield* IntakeTables
    const events = yield* MirrorEvents
    const record = Option.getOrThrow(yield* tables.get(id))
    return yield* settleCompletion({ store, tables, events, root, now: SERVICE_DONE + 10_000 }, record)
  })

describe("settleCompletion", () => {
  it.effect("waits for a catch-up that started after the service completed it, then for every file on disk", () => {
    const root = tempDir("dlsync-complete-")
    return Effect.gen(function* () {
      const store = yield* Store
      const { files, seed } = yield* completedThere()
      yield* seed
      for (const f of files) yield* landed(root, `tv/Show/${f.name}`, f)
      // The store caught up from a moment before the service said completed: it may lack files.
      yield* store.feed.recordPoll(new Date(SERVICE_DONE - 1).toISOString())
      assert.strictEqual(yield* settle(root), "waiting")
      yield* store.feed.recordPoll(new Date(SERVICE_DONE + 1).toISOString())
      // A file the user replaced since it landed is not verified.
      Fs.writeFileSync(Path.join(root, "tv/Show/Show.srt"), "changed!!")
      assert.strictEqual(yield* settle(root), "waiting")
      Fs.writeFileSync(Path.join(root, "tv/Show/Show.srt"), Buffer.alloc(5, 1))
      assert.strictEqual(yield* settle(root), "completed")
      const record = Option.getOrThrow(yield* (yield* IntakeTables).get(id))
      assert.strictEqual(record.contentPath, "tv/Show")
      assert.strictEqual(record.size, 35)
      const [item] = yield* (yield* Intake).list({ ids: [id] })
      assert.strictEqual(item?.state, "completed")
      assert.strictEqual(item?.contentPath, Path.join(root, "tv/Show"))
    }).pipe(Effect.provide(intakeOverStore(root)))
  })

  it.effect("a file of another download in its folder: failed, saying why; nothing reported complete", () => {
    const root = tempDir("dlsync-complete-")
    return Effect.gen(function* () {
      yield* TestClock.setTime(SERVICE_DONE)
      const store = yield* Store
      const { files, seed } = yield* completedThere([remoteFile("f9", "r", "Other.mkv", 7, "dl_9")])
      yield* seed
      yield* store.feed.recordPoll(new Date(SERVICE_DONE + 1).toISOString())
      for (const f of files) yield* landed(root, `tv/Show/${f.name}`, f)
      assert.strictEqual(yield* settle(root), "failed")
      const [item] = yield* (yield* Intake).list({ ids: [id] })
      assert.strictEqual(item?.state, "failed")
      assert.strictEqual(
        item?.reason,
        `the service put its files in "tv/Show" beside 1 file(s) of another download; dlsync reports no path that holds another release's files (remove it and add it again)`
      )
    }).pipe(Effect.provide(intakeOverStore(root)))
  })
})
