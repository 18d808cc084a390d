/**
 * runHook with real processes: a hook leads a process group of its own, and nothing it
 * started outlives its run: past its timeout the whole group is ended (SIGTERM, then SIGKILL
 * after the grace), a background child it left when it exited is ended with it, and an
 * interrupted run (shutdown) ends the group too. Waits are on files the hooks write and on
 * the fibers, never on time; the timeouts and the grace run on the test clock.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { GROUP_POLL_MS } from "../../src/hooks/processGroup.ts"
import { runHook } from "../../src/hooks/runHook.ts"
import { advanceUntil } from "../standins/recordingServer.ts"
import { groupAlive, pidIn, processAlive, until } from "./support/processes.ts"

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-hook-"))

/** `sh -c script hook <file>`: the script writes pids into $1. */
const shHook = (script: string, file: string, timeoutMs: number) =>
  runHook({
    argv: ["/bin/sh", "-c", script, "hook", file],
    env: { PATH: process.env.PATH ?? "" },
    stdin: "",
    timeoutMs
  })

/** Starts a background `sleep 240`, writes its pid, then waits for it. */
const WAITS_ON_A_CHILD = `sleep 240 & echo $! > "$1"; wait`

describe("runHook", () => {
  it.effect("past its timeout, the hook and every process of its group are ended", () =>
    Effect.gen(function* () {
      const file = Path.join(tempDir(), "child")
      const run = yield* Effect.forkChild(shHook(WAITS_ON_A_CHILD, file, 10_000))
      const child = yield* until(() => pidIn(file), "the hook started its child")
      yield* TestClock.adjust("10 seconds")
      yield* advanceUntil(() => run.pollUnsafe() !== undefined, GROUP_POLL_MS)
      const outcome = yield* Fiber.join(run)
      assert.isTrue(outcome.timedOut)
      assert.isNull(outcome.code)
      assert.isNotNull(outcome.signal)
      assert.isFalse(groupAlive(outcome.pid ?? assert.fail("started")), "no process of its group is left")
      assert.isFalse(processAlive(child), "the background child is gone")
    })
  )

  it.effect("a hook and a child that ignore SIGTERM are killed after the grace", () =>
    Effect.gen(function* () {
      const file = Path.join(tempDir(), "child")
      const run = yield* Effect.forkChild(shHook(`trap '' TERM; ${WAITS_ON_A_CHILD}`, file, 10_000))
      const child = yield* until(() => pidIn(file), "the hook started its child")
      yield* TestClock.adjust("10 seconds")
      yield* advanceUntil(() => run.pollUnsafe() !== undefined, GROUP_POLL_MS)
      const outcome = yield* Fiber.join(run)
      assert.isTrue(outcome.timedOut)
      assert.strictEqual(outcome.signal, "SIGKILL", "SIGTERM is ignored: SIGKILL after the grace")
      assert.isFalse(groupAlive(outcome.pid ?? assert.fail("started")))
      assert.isFalse(processAlive(child))
    })
  )

  it.live("a hook that exits leaving a background child ends with its exit; the child is ended, the output kept", () =>
    Effect.gen(function* () {
      const file = Path.join(tempDir(), "child")
      const outcome = yield* shHook(`sleep 240 & echo $! > "$1"; echo started`, file, 600_000)
      assert.isFalse(outcome.timedOut)
      assert.strictEqual(outcome.code, 0)
      assert.isTrue(outcome.leftovers, "the outcome says it left a process running")
      assert.strictEqual(outcome.stdout, "started\n")
      assert.isFalse(groupAlive(outcome.pid ?? assert.fail("started")))
      assert.isFalse(processAlive(pidIn(file) ?? assert.fail("the child's pid was written")))
    })
  )

  it.live("interrupting a run (shutdown) ends the hook's whole group", () =>
    Effect.gen(function* () {
      const file = Path.join(tempDir(), "child")
      const run = yield* Effect.forkChild(shHook(`echo $$ > "$1.hook"; ${WAITS_ON_A_CHILD}`, file, 600_000))
      const child = yield* until(() => pidIn(file), "the hook started its child")
      const hook = pidIn(`${file}.hook`) ?? assert.fail("the hook's pid was written")
      yield* Fiber.interrupt(run)
      assert.isFalse(groupAlive(hook))
      assert.isFalse(processAlive(child))
    })
  )

  it.live("a program that does not exist is an outcome, not a failure", () =>
    Effect.gen(function* () {
      const outcome = yield* runHook({ argv: ["/nonexistent/hook"], env: {}, stdin: "", timeoutMs: 5000 })
      assert.strictEqual(outcome.startError, "ENOENT")
      assert.isNull(outcome.pid)
    })
  )
})
