/**
 * The record step publishes what happened (events/) after the store recorded it: a consumer
 * that reads the store on `file_complete` finds the file synced, on `file_failed` failed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, PubSub } from "effect"
import { FileProgress } from "../../src/appstate/FileProgress.ts"
import { recordDownload } from "../../src/engine/recordDownload.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Store } from "../../src/store/Store.ts"
import type { DownloadAction } from "../../src/sync/executor.ts"
import { storeLayer, tempDir } from "../store/helpers.ts"
import { file } from "../sync/fixtures.ts"

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
