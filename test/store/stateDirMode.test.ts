import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Database } from "../../src/store/Database.ts"
import { tempDir, withStore } from "./helpers.ts"

describe("state dir mode", () => {
  it.effect("an existing state dir with a wider mode is tightened to 0700 when the database opens", () =>
    Effect.gen(function* () {
      const stateDir = Path.join(tempDir(), "state")
      Fs.mkdirSync(stateDir, { mode: 0o755 })
      Fs.chmodSync(stateDir, 0o755)
      yield* withStore(
        stateDir,
        Database.use(() => Effect.void)
      )
      assert.strictEqual(Fs.statSync(stateDir).mode & 0o777, 0o700)
    })
  )
})
