/**
 * The record step publishes what happened (events/) after the store recorded it: a consumer
 * that reads the store on `file_complete` finds the file synced, on `file_failed` failed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, PubSub } from "effect"
import { FileProgress } from "../../src/appstate/FileProgress.ts"
import { upsert } from "../../src/domain/RemoteItem.ts"
import { recordDownload } from "../../src/engine/recordDownload.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Store } from "../../src/store/Store.ts"
import type { DownloadAction } from "../../src/sync/executor.ts"
import { storeLayer, tempDir } from "../store/helpers.ts"
import { file, folder } from "../sync/fixtures.ts"

const action = (path: string, id: string): DownloadAction => ({
  _tag: "Download",
  item: file(id, path.split("/").at(-1) ?? path, null, { size: 7, kind: "video" }),
  path,
  replace: null,
  reason: "new remote file"
})

describe("recordDownload → mirror events", () => {
  it.effect("publishes file_complete and file_failed with the file's facts, once the store has recorded them", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const seen: Array<[MirrorEvent, string | undefined]> = []
      // A publisher that looks at the store at the moment of publishing.
      const events = Layer.succeed(MirrorEvents, {
        publish: (event) =>
          Effect.gen(function* () {
            const path = "path" in event ? event.path : ""
            const entry = yield* store.local.byPath(path)
            seen.push([event, Option.getOrUndefined(entry)?.state])
          }),
        subscribe: Effect.flatMap(PubSub.bounded<MirrorEvent>(1), PubSub.subscribe)
      })
      const progress = Layer.succeed(FileProgress, FileProgress.of({ report: () => Effect.void }))
      const written = { size: 7, mtimeNs: 1n, ino: 42n }
      yield* recordDownload({ _tag: "Landed", action: action("TV/Show/e1.mkv", "f1"), written }, "/mirror").pipe(
        Effect.provide([events, progress])
      )
      yield* recordDownload({ _tag: "Failed", action: action("e2.mkv", "f2"), reason: "link refused" }, "/mirror").pipe(
        Effect.provide([events, progress])
      )
      assert.deepStrictEqual(seen, [
        [
          {
            _tag: "file_complete",
            path: "TV/Show/e1.mkv",
            absolutePath: "/mirror/TV/Show/e1.mkv",
            fileId: "f1",
            size: 7,
            kind: "video",
            category: "TV"
          },
          "synced"
        ],
        [
          {
            _tag: "file_failed",
            path: "e2.mkv",
            absolutePath: "/mirror/e2.mkv",
            fileId: "f2",
            size: 7,
            kind: "video",
            category: null,
            reason: "link refused"
          },
          "failed"
        ]
      ])
    }).pipe(Effect.provide(storeLayer(tempDir())))
  )
})

describe("recordDownload → download_complete", () => {
  it.effect("is published once, when the last file of a service download lands, not for a replaced file", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const release = folder("d", "Show", null, { downloadId: "dl_1" })
      const e1 = file("e1", "e1.mkv", "d", { size: 7, downloadId: "dl_1" })
      const e2 = file("e2", "e2.mkv", "d", { size: 7, downloadId: "dl_1" })
      const other = file("o", "other.mkv", null, { size: 7, downloadId: "dl_2" })
      yield* store.feed.applyPage({ changes: [release, e1, e2, other].map(upsert), nextCursor: null, hasMore: false })
      const subscription = yield* (yield* MirrorEvents).subscribe
      const completions = Effect.map(PubSub.takeUpTo(subscription, 100), (events) =>
        events.filter((e) => e._tag === "download_complete")
      )
      const land = (item: typeof e1, path: string, replace: DownloadAction["replace"] = null) =>
        recordDownload(
          { _tag: "Landed", action: { _tag: "Download", item, path, replace, reason: "new" }, written: WRITTEN },
          "/mirror"
        )
      yield* land(e1, "Show/e1.mkv")
      assert.deepStrictEqual(yield* completions, [], "one file of two")
      yield* land(e2, "Show/e2.mkv")
      assert.deepStrictEqual(yield* completions, [
        { _tag: "download_complete", downloadId: "dl_1", paths: ["Show/e1.mkv", "Show/e2.mkv"] }
      ])
      yield* land(e2, "Show/e2.mkv", { type: "file", size: 7, mtimeNs: 1n, ino: 42n })
      assert.deepStrictEqual(yield* completions, [], "a new version of a file completes nothing again")
    }).pipe(
      Effect.provide([
        storeLayer(tempDir()),
        MirrorEvents.layer,
        Layer.succeed(FileProgress, FileProgress.of({ report: () => Effect.void }))
      ])
    )
  )
})

const WRITTEN = { size: 7, mtimeNs: 1n, ino: 42n }
