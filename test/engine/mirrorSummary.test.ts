/**
 * The mirror's summary in the status document is kept until the store changes: an unchanged
 * store answers without a walk, any write (this process's or another's) walks again, at most
 * once per SUMMARY_MIN_AGE_MS.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { remoteVersionOf } from "../../src/domain/LocalEntry.ts"
import { upsert } from "../../src/domain/RemoteItem.ts"
import { cachedMirrorSummary, SUMMARY_MIN_AGE_MS } from "../../src/engine/mirrorSummary.ts"
import { statusDocument } from "../../src/engine/statusDocument.ts"
import { Store } from "../../src/store/Store.ts"
import { tempDir, withStore } from "../store/helpers.ts"
import { file } from "../sync/fixtures.ts"
import { statusSettings } from "./statusFixtures.ts"

describe("cachedMirrorSummary", () => {
  it.effect("is kept while the store is unchanged and walked again after a change", () =>
    Effect.gen(function* () {
      const stateDir = tempDir()
      const settings = yield* statusSettings(stateDir)
      yield* withStore(
        stateDir,
        Effect.gen(function* () {
          const store = yield* Store
          const a = file("a", "a.mkv", null, { size: 10 })
          yield* store.feed.applyPage({ changes: [upsert(a)], nextCursor: "c1", hasMore: false })
          const summary = cachedMirrorSummary(store, settings)
          const first = yield* summary
          assert.strictEqual(first.bytes.pending, 10)
          assert.strictEqual(yield* summary, first, "unchanged store: the same summary")

          yield* store.local.put({
            path: "a.mkv",
            remoteId: a.id,
            type: "file",
            written: { size: 10, mtimeNs: 0n, ino: 1n },
            remote: remoteVersionOf(a),
            state: "synced",
            attempts: 0,
            lastError: null
          })
          assert.strictEqual(yield* summary, first, "walked again at most every SUMMARY_MIN_AGE_MS")
          yield* TestClock.adjust(SUMMARY_MIN_AGE_MS)
          const second = yield* summary
          assert.notStrictEqual(second, first)
          assert.deepStrictEqual(second.bytes, { mirrored: 10, pending: 0 })

          // A write through another connection (another dlsync process) is seen too.
          yield* withStore(
            stateDir,
            Store.use((other) =>
              other.feed.applyPage({
                changes: [upsert(file("b", "b.mkv", null, { size: 5 }))],
                nextCursor: "c2",
                hasMore: false
              })
            )
          )
          yield* TestClock.adjust(SUMMARY_MIN_AGE_MS)
          assert.strictEqual((yield* summary).bytes.pending, 5)

          // The document built on it says the same as one that walks the store itself.
          yield* TestClock.adjust(SUMMARY_MIN_AGE_MS)
          const cached = yield* statusDocument(store, settings, undefined, { summary })
          const walked = yield* statusDocument(store, settings)
          assert.deepStrictEqual({ ...cached, cursor: null }, { ...walked, cursor: null })
        })
      )
    })
  )
})
