/**
 * `status` lists the shortened names as the pass gave them: on a root that ignores case a
 * sibling differing only in case gets a longer name, which may have to be shortened.
 */
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { upsert } from "../../src/domain/RemoteItem.ts"
import { statusDocument } from "../../src/engine/statusDocument.ts"
import { Store } from "../../src/store/Store.ts"
import { maxPathBytesUnder } from "../../src/sync/tree.ts"
import { tempDir, withStore } from "../store/helpers.ts"
import { file, folder } from "../sync/fixtures.ts"
import { statusSettings } from "./statusFixtures.ts"

const FOLDERS = 15
const FOLDER_BYTES = 250

/** Folders and two files whose names differ only in case, the files' paths exactly `budget` bytes long. */
const nearPathMax = (budget: number) => {
  const items = []
  for (let i = 0; i < FOLDERS; i++) {
    items.push(folder(`d${i}`, `${i}`.padEnd(FOLDER_BYTES, "x"), i === 0 ? null : `d${i - 1}`))
  }
  const nameBytes = budget - FOLDERS * (FOLDER_BYTES + 1)
  const stem = "m".repeat(nameBytes - "M.mkv".length)
  items.push(file("upper", `M${stem}.mkv`, `d${FOLDERS - 1}`), file("lower", `m${stem}.mkv`, `d${FOLDERS - 1}`))
  return items
}

describe("statusDocument: shortened names", () => {
  it.effect("follow the case sensitivity the last pass found at the root", () =>
    Effect.gen(function* () {
      const stateDir = tempDir()
      const settings = yield* statusSettings(stateDir)
      yield* withStore(
        stateDir,
        Effect.gen(function* () {
          const store = yield* Store
          const items = nearPathMax(maxPathBytesUnder(Path.resolve(settings.root)))
          yield* store.feed.applyPage({ changes: items.map(upsert), nextCursor: null, hasMore: false })
          // No pass yet, or a case-sensitive root: both names fit as they are.
          assert.deepStrictEqual((yield* statusDocument(store, settings)).shortened, [])
          yield* store.mirrorRoot.recordCaseInsensitive(false)
          assert.deepStrictEqual((yield* statusDocument(store, settings)).shortened, [])
          // Ignoring case, one file takes a tag, and its path no longer fits without shortening.
          yield* store.mirrorRoot.recordCaseInsensitive(true)
          const shortened = (yield* statusDocument(store, settings)).shortened
          assert.lengthOf(shortened, 1)
          assert.include(["upper", "lower"], shortened[0]!.remoteId)
          assert.match(shortened[0]!.path, /\[[0-9a-f]{6}\]\.mkv$/)
        })
      )
    })
  )
})
