/**
 * Hooks run as real child processes: argv without a shell, the facts in DLSYNC_* variables,
 * changed paths on stdin, a timeout that kills, and every outcome in the log.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import type { HookSettings } from "../../src/config/afterLandingSettings.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { mirrorEventsLayer, publishEvent } from "../../src/events/MirrorEvents.ts"
import { hooksLayer } from "../../src/hooks/Hooks.ts"
import { runHook } from "../../src/hooks/runHook.ts"

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
const withHooks = (hooks: ReadonlyArray<HookSettings>, body: Effect.Effect<void>, logs: Array<string>) =>
  Effect.scoped(
    Effect.provide(
      body,
      Layer.fresh(
        hooksLayer("/mirror", hooks, { PATH: process.env.PATH, DLSYNC_SERVICE_API_KEY: "secret" }).pipe(
          Layer.provideMerge(mirrorEventsLayer)
        )
      )
    )
  ).pipe(Effect.provide(Logger.layer([Logger.make((o) => logs.push(Logger.formatLogFmt.log(o)))])))

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("runHook", () => {
  it.live("a hook that runs past its timeout is killed", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-hook-"))
      const pidFile = Path.join(dir, "pid")
      const outcome = yield* runHook({
        argv: [
          NODE,
          "-e",
          `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000)`
        ],
        env: {},
        stdin: "",
        timeoutMs: 500
      })
      assert.isTrue(outcome.timedOut)
      assert.isNull(outcome.code)
      const pid = Number(Fs.readFileSync(pidFile, "utf8"))
      assert.isFalse(isAlive(pid), "the hook's process is gone")
    })
  )

  it.live("a program that does not exist is an outcome, not a failure", () =>
    Effect.gen(function* () {
      const outcome = yield* runHook({ argv: ["/nonexistent/hook"], env: {}, stdin: "", timeoutMs: 5000 })
      assert.strictEqual(outcome.startError, "ENOENT")
    })
  )
})

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
})
