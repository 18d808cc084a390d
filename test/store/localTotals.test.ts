/** The device record's totals, summed from the local entries. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Database } from "../../src/store/Database.ts"
import { localTotals } from "../../src/store/localTotals.ts"
import { Store } from "../../src/store/Store.ts"
import { entryOf, file, folder } from "../sync/fixtures.ts"
import { tempDir, withStore } from "./helpers.ts"

describe("localTotals", () => {
  it.effect("counts complete and failed files and the bytes of the complete ones; folders do not count", () =>
    withStore(
      tempDir(),
      Effect.gen(function* () {
        const { db } = yield* Database
        assert.deepStrictEqual(yield* localTotals(db), { complete: 0, failed: 0, bytes: 0 })
        const store = yield* Store
        yield* store.local.put(entryOf(folder("d", "Movies"), "Movies"))
        yield* store.local.put(entryOf(file("a", "a.mkv", "d", { size: 300 }), "Movies/a.mkv"))
        yield* store.local.put(entryOf(file("b", "b.mkv", "d", { size: 200 }), "Movies/b.mkv"))
        yield* store.local.put({ ...entryOf(file("c", "c.mkv", "d", { size: 50 }), "Movies/c.mkv"), state: "failed" })
        yield* store.local.put({
          ...entryOf(file("e", "e.mkv", "d", { size: 70 }), "Movies/e.mkv"),
          state: "pending",
          written: null
        })
        assert.deepStrictEqual(yield* localTotals(db), { complete: 2, failed: 1, bytes: 500 })
      })
    )
  )
})
