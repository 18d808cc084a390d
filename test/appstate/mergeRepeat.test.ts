/** mergeProgress: the same state reported again writes nothing (only `updated_at` differs). */
import { assert, describe, it } from "@effect/vitest"
import { mergeProgress } from "../../src/appstate/mergeProgress.ts"
import { progressEntry } from "../../src/appstate/ProgressEntry.ts"

const locked = (updatedAtMs: number, error = "locked on the remote") =>
  progressEntry({ state: "locked", bytes: 0, size: 10, path: "a.mkv", updatedAtMs, error })

describe("mergeProgress, a repeated report", () => {
  it("is Unchanged when only updated_at differs, and a Write when anything else does", () => {
    const first = mergeProgress({ other: 1 }, "dev", locked(1_000))
    assert.strictEqual(first._tag, "Write")
    const value = first._tag === "Write" ? first.value : null
    assert.strictEqual(mergeProgress(value, "dev", locked(2_000))._tag, "Unchanged")
    assert.strictEqual(mergeProgress(value, "dev", locked(2_000, "another reason"))._tag, "Write")
    assert.strictEqual(
      mergeProgress(
        value,
        "dev",
        progressEntry({ state: "complete", bytes: 10, size: 10, path: "a.mkv", updatedAtMs: 2_000 })
      )._tag,
      "Write"
    )
  })
})
