/**
 * Hooks run as real child processes: argv without a shell, the facts in DLSYNC_* variables,
 * changed paths on stdin, a timeout that kills, and every outcome in the log. A hook that
 * leaves processes behind never holds a slot; shutdown ends the hooks running at once.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger } from "effect"
import type { HookSettings } from "../../src/config/afterLandingSettings.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { MirrorEvents, publishEvent } from "../../src/events/MirrorEvents.ts"
import { hooksLayer } from "../../src/hooks/Hooks.ts"
import { groupAlive, pidIn, processAlive, until } from "./support/processes.ts"

const NODE = process.execPath

const landed: MirrorEvent = {
  _tag: "file_complete",
  path: "TV/Show/e1.mkv",
  absolutePath: "/mirror/TV/Show/e1.mkv",
  fileId: "f_1",
  size: 1234,
  kind: "video",
  category: "TV"
}

/** Runs `body` with the event source and the hooks, then closes them (which waits for the hooks owed). */
const withHooks = (
  hooks: ReadonlyArray<HookSettings>,
  body: Effect.Effect<void, never, MirrorEvents>,
  logs: Array<string>
) =>
  Effect.scoped(
    Effect.provide(
      body,
      Layer.fresh(
        hooksLayer("/mirror", hooks, { PATH: process.env.PATH, DLSYNC_SERVICE_API_KEY: "secret" }).pipe(
          Layer.provideMerge(MirrorEvents.layer)
        )
      )
    )
  ).pipe(Effect.provide(Logger.layer([Logger.make((o) => logs.push(Logger.formatLogFmt.log(o)))])))

describe("hooksLayer", () => {
  it.live("runs the hook with argv, the facts in its environment, and no DLSYNC_ setting of dlsync's own", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-hook-"))
      const out = Path.join(dir, "env.json")
      const script = `const fs=require("fs"); fs.writeFileSync(process.argv[1], JSON.stringify({ argv: process.argv.slice(2), env: process.env }))`
      const logs: Array<string> = []
      yield* withHooks(
        [{ event: "file_complete", command: [NODE, "-e", script, out, "a b", "$HOME"], timeout: 10_000 }],
        Effect.andThen(publishEvent(landed), publishEvent({ ...landed, _tag: "file_failed", reason: "x" })),
        logs
      )
      const seen = JSON.parse(Fs.readFileSync(out, "utf8")) as { argv: Array<string>; env: Record<string, string> }
      assert.deepStrictEqual(seen.argv, ["a b", "$HOME"], "no shell: arguments pass as they are")
      const facts = Object.fromEntries(Object.entries(seen.env).filter(([k]) => k.startsWith("DLSYNC_")))
      assert.deepStrictEqual(facts, {
        DLSYNC_EVENT: "file_complete",
        DLSYNC_ROOT: "/mirror",
        DLSYNC_PATH: "/mirror/TV/Show/e1.mkv",
        DLSYNC_RELATIVE_PATH: "TV/Show/e1.mkv",
        DLSYNC_FILE_ID: "f_1",
        DLSYNC_SIZE: "1234",
        DLSYNC_KIND: "video",
        DLSYNC_CATEGORY: "TV"
      })
      assert.isTrue(
        logs.some((l) => l.includes("hook file_complete") && l.includes("exit 0")),
        logs.join("\n")
      )
      assert.strictEqual(logs.filter((l) => l.includes("hook ")).length, 1, "file_failed runs no file_complete hook")
    })
  )

  it.live("gives pass_complete its changed paths as JSON on stdin", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-hook-"))
      const out = Path.join(dir, "stdin.json")
      const script = `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>require("fs").writeFileSync(process.argv[1], s))`
      yield* withHooks(
        [{ event: "pass_complete", command: [NODE, "-e", script, out], timeout: 10_000 }],
        publishEvent({ _tag: "pass_complete", changed: ["TV/a.mkv", "Movies"], downloaded: 1, failed: 0 }),
        []
      )
      assert.deepStrictEqual(JSON.parse(Fs.readFileSync(out, "utf8")), ["/mirror/TV/a.mkv", "/mirror/Movies"])
    })
  )

  it.live("logs a failing hook's exit status and output, and one that timed out", () =>
    Effect.gen(function* () {
      const logs: Array<string> = []
      yield* withHooks(
        [
          {
            event: "file_failed",
            command: [NODE, "-e", `console.error("disk says no"); process.exit(3)`],
            timeout: 10_000
          },
          { event: "file_failed", command: [NODE, "-e", "setTimeout(() => {}, 60000)"], timeout: 300 }
        ],
        publishEvent({ ...landed, _tag: "file_failed", reason: "link refused" }),
        logs
      )
      const hookLines = logs.filter((l) => l.includes("hook file_failed"))
      assert.strictEqual(hookLines.length, 2, logs.join("\n"))
      assert.isTrue(
        hookLines.some((l) => l.includes("exit 3") && l.includes("disk says no")),
        hookLines.join("\n")
      )
      assert.isTrue(
        hookLines.some((l) => l.includes("timed out") && l.includes("killed")),
        hookLines.join("\n")
      )
    })
  )

  it.live(
    "a hook that leaves a background child frees its slot: the hooks after it run, one past its timeout is logged",
    () =>
      Effect.gen(function* () {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-hook-"))
        const sh = (script: string, name: string, timeout: number): HookSettings => ({
          event: "file_complete",
          command: ["/bin/sh", "-c", script, name, Path.join(dir, name)],
          timeout
        })
        const logs: Array<string> = []
        yield* withHooks(
          [
            sh(`sleep 240 & echo $! > "$1"; echo left`, "leaves", 600_000),
            sh(`sleep 240 & echo $! > "$1"; wait`, "overruns", 300),
            sh(`echo ran > "$1"`, "third", 600_000)
          ],
          publishEvent(landed),
          logs
        )
        assert.strictEqual(Fs.readFileSync(Path.join(dir, "third"), "utf8"), "ran\n", "the third hook ran")
        const hookLines = logs.filter((l) => l.includes("hook file_complete (sh)"))
        assert.strictEqual(hookLines.length, 3, logs.join("\n"))
        assert.isTrue(
          hookLines.some((l) => /exit 0 .*; it left processes running, ended; stdout: left/.test(l)),
          hookLines.join("\n")
        )
        assert.isTrue(
          hookLines.some((l) => l.includes("timed out after 300ms: killed")),
          hookLines.join("\n")
        )
        const left = pidIn(Path.join(dir, "leaves")) ?? assert.fail("the first hook wrote its child's pid")
        assert.isFalse(processAlive(left), "the child it left is gone")
      })
  )

  it.live("shutdown ends the running hooks' groups at once and runs none of those owed", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-hook-"))
      const logs: Array<string> = []
      const waits = (name: string): HookSettings => ({
        event: "file_complete",
        command: ["/bin/sh", "-c", `echo $$ > "$1.hook"; sleep 240 & echo $! > "$1"; wait`, name, Path.join(dir, name)],
        timeout: 600_000
      })
      const owed: HookSettings = {
        event: "file_complete",
        command: ["/bin/sh", "-c", `echo ran > "$1"`, "owed", Path.join(dir, "owed")],
        timeout: 600_000
      }
      const running = yield* Effect.forkChild(
        withHooks([waits("a"), waits("b"), owed], Effect.andThen(publishEvent(landed), Effect.never), logs)
      )
      const children = [
        yield* until(() => pidIn(Path.join(dir, "a")), "hook a started"),
        yield* until(() => pidIn(Path.join(dir, "b")), "hook b started")
      ]
      const hooks = ["a", "b"].map((name) => pidIn(Path.join(dir, `${name}.hook`)) ?? assert.fail(`hook ${name}'s pid`))
      yield* Fiber.interrupt(running)
      for (const pid of hooks) assert.isFalse(groupAlive(pid), "the hook's group is gone")
      for (const pid of children) assert.isFalse(processAlive(pid), "its child is gone")
      assert.isFalse(Fs.existsSync(Path.join(dir, "owed")), "a hook owed is not started at shutdown")
      assert.isTrue(
        logs.some((l) => l.includes("shutdown: 2 running hooks stopped, 1 owed not run")),
        logs.join("\n")
      )
    })
  )
})
