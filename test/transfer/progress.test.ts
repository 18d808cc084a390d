import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { formatBytes, formatEta } from "../../src/transfer/progressFormat.ts"
import { totalsLine } from "../../src/transfer/progressLog.ts"
import { describeEvent, ProgressView, renderProgress } from "../../src/transfer/progressView.ts"

const MiB = 1024 * 1024

describe("progress", () => {
  it("computes per-file and overall rate and ETA over a sliding window", () => {
    const t = makeProgressTracker()
    const a = t.start("a", "movies/a.mkv", 100 * MiB, 0, 0)
    const b = t.start("b", "movies/b.mkv", 10 * MiB, 5 * MiB, 0)
    t.snapshot(1_000)
    a.done += 20 * MiB
    a.fetched += 20 * MiB
    b.done += 5 * MiB
    b.fetched += 5 * MiB
    const s = t.snapshot(3_000)
    const fa = s.files.find((f) => f.fileId === "a")
    assert.strictEqual(fa?.rate, 10 * MiB)
    assert.strictEqual(fa?.eta, 8)
    assert.strictEqual(s.overall.rate, 12.5 * MiB)
    t.end(b, "completed")
    const after = t.snapshot(4_000)
    assert.strictEqual(after.overall.active, 1)
    assert.strictEqual(after.overall.completed, 1)
    assert.strictEqual(after.overall.size, 110 * MiB)
  })

  it("renders a block that fits the terminal, fastest files first", () => {
    const t = makeProgressTracker()
    const a = t.start(
      "a",
      "a-very-long-directory-name/and-an-even-longer-file-name-for-the-movie.mkv",
      2 * 1024 * MiB,
      0,
      0
    )
    t.start("b", "b.iso", 10 * MiB, 0, 0)
    t.snapshot(0)
    a.done = 512 * MiB
    a.fetched = 512 * MiB
    const lines = renderProgress(t.snapshot(4_000), 80)
    assert.strictEqual(lines.length, 3)
    for (const l of lines) assert.isAtMost(l.length, 80, l)
    assert.include(lines[0] ?? "", "2 active")
    assert.include(lines[1] ?? "", "128.0 MiB/s")
    assert.include(lines[1] ?? "", "25%")
    assert.include(lines[1] ?? "", "…")
    assert.include(lines[2] ?? "", "b.iso")
  })

  it("describes lifecycle events in one line each, and totals only while active", () => {
    assert.strictEqual(
      describeEvent({ _tag: "Parked", fileId: "x", name: "a.mkv", reason: "CDN answered 403" }),
      "parked a.mkv: CDN answered 403"
    )
    assert.include(describeEvent({ _tag: "Started", fileId: "x", name: "a", size: 10, resumedAt: 5 }) ?? "", "resuming")
    const t = makeProgressTracker()
    assert.isUndefined(totalsLine(t.snapshot(0)))
    t.start("a", "a", MiB, 0, 0)
    assert.include(totalsLine(t.snapshot(0)) ?? "", "1 active")
    assert.strictEqual(formatBytes(1536), "1.5 KiB")
    assert.strictEqual(formatEta(3725), "1:02:05")
    assert.strictEqual(formatEta(null), "--:--")
  })

  it.effect("the TTY view redraws in place, prints events above the block and clears it when stopped", () =>
    Effect.gen(function* () {
      const t = makeProgressTracker()
      const out: Array<string> = []
      const fiber = yield* Effect.forkChild(
        ProgressView.run(t, { write: (s) => out.push(s), width: () => 100, intervalMs: 5 })
      )
      // One interval on the TestClock: the view's next redraw.
      const redraw = TestClock.adjust(5)
      const p = t.start("a", "a.mkv", MiB, 0, 0)
      yield* redraw
      assert.include(out.join(""), "a.mkv")
      t.emit({ _tag: "Finished", fileId: "a", name: "a.mkv", size: MiB, fetched: MiB, elapsedMs: 1000 })
      t.end(p, "completed")
      assert.include(out.join(""), "done a.mkv", "an event is printed at once")
      const written = out.length
      yield* redraw
      assert.isAbove(out.length, written, "one redraw after the file ended")
      yield* Fiber.interrupt(fiber)
      const text = out.join("")
      assert.include(text, "a.mkv")
      assert.include(text, "done a.mkv")
      assert.include(text, "\x1b[") // cursor movement: redrawn in place
      const esc = String.fromCharCode(27)
      const last = out[out.length - 1] ?? ""
      assert.isTrue(last.startsWith(`${esc}[`) && last.endsWith(`F${esc}[J`), "the block is cleared at the end")
    })
  )
})
