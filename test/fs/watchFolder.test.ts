/**
 * The one folder watcher: a burst of changes is one settled item once the folder was quiet
 * for the settle time (on the test clock, over a real chokidar watcher), a real file written
 * under a real folder arrives, and a failing watcher is logged once per kind with what to do.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { watch } from "chokidar"
import { Effect, Logger, Queue } from "effect"
import { TestClock } from "effect/testing"
import { settledChanges, watchFolder } from "../../src/fs/watchFolder.ts"

const tempFolder = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "dlsync-watch-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A real chokidar watcher on `folder`, closed with the scope. */
const chokidarOn = (folder: string) =>
  Effect.acquireRelease(
    Effect.sync(() => watch(folder, { ignoreInitial: true })),
    (w) => Effect.promise(() => w.close())
  )

const options = (folder: string) => ({
  folder,
  what: "the mirror root",
  whenFailing: "local changes are seen at the next pass",
  settleMs: 2_000
})

describe("watchFolder", () => {
  it.effect("a burst of changes is one item, once the folder was quiet for the settle time", () =>
    Effect.gen(function* () {
      const folder = yield* tempFolder
      const watcher = yield* chokidarOn(folder)
      const settled = yield* settledChanges(watcher, options(folder))
      const event = (name: string) => Effect.sync(() => watcher.emit("all", "add", NodePath.join(folder, name)))
      yield* event("a")
      yield* TestClock.adjust("1500 millis")
      yield* event("b")
      yield* TestClock.adjust("1500 millis")
      assert.strictEqual(yield* Queue.size(settled), 0, "still changing 1.5 s ago")
      yield* event("c")
      yield* TestClock.adjust("1999 millis")
      assert.strictEqual(yield* Queue.size(settled), 0, "quiet for less than the settle time")
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Queue.size(settled), 1, "one item for the burst")
      yield* event("d")
      yield* TestClock.adjust("2 seconds")
      yield* event("e")
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Queue.size(settled), 1, "items not taken collapse into one")
    })
  )

  it.live("a file written under the folder arrives as a settled change", () =>
    Effect.gen(function* () {
      const folder = yield* tempFolder
      const watching = yield* watchFolder({ ...options(folder), ignored: () => false, settleMs: 20 })
      yield* watching.ready
      Fs.writeFileSync(NodePath.join(folder, "new.mkv"), "x")
      yield* Queue.take(watching.changes)
    })
  )

  it.effect("a failing watcher is logged once per kind, saying what it costs and what to do", () =>
    Effect.gen(function* () {
      const folder = yield* tempFolder
      const logs: Array<string> = []
      const watcher = yield* chokidarOn(folder)
      yield* settledChanges(watcher, options(folder)).pipe(
        Effect.provide(Logger.layer([Logger.make((o) => logs.push(String(o.message)))]))
      )
      const limit = Object.assign(new Error("ENOSPC: System limit for number of file watchers reached"), {
        code: "ENOSPC"
      })
      for (let i = 0; i < 3; i++) watcher.emit("error", limit)
      watcher.emit("error", Object.assign(new Error("EMFILE: too many open files"), { code: "EMFILE" }))
      // The last error is logged after the three before it were looked at (one queue, in order).
      for (let i = 0; logs.length < 2 && i < 1000; i++) yield* Effect.yieldNow
      assert.strictEqual(logs.length, 2, logs.join("\n"))
      assert.include(logs[0], `watching ${folder} (the mirror root) failed: the inotify watch limit is reached`)
      assert.include(logs[0], "local changes are seen at the next pass")
      assert.include(logs[0], "fs.inotify.max_user_watches")
      assert.include(logs[1], "fs.inotify.max_user_instances")
    })
  )
})
