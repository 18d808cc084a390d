import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger } from "effect"
import { TestConsole } from "effect/testing"
import { makeSdNotify, watchdogInterval } from "../../src/service/SdNotify.ts"
import { requireTools, skipWithout } from "./systemdTools.ts"

const TOOLS = ["systemd-notify", "systemd-socket-activate"]
const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url))
const reader = fileURLToPath(new URL("./fixtures/notifyReader.ts", import.meta.url))

/** A notification socket served by notifyReader.ts; `messages` are the datagrams received so far. */
const notifySocket = Effect.acquireRelease(
  Effect.callback<{ readonly path: string; readonly child: ChildProcess; readonly messages: Array<string> }, Error>(
    (resume) => {
      requireTools(TOOLS)
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-notify-"))
      const path = Path.join(dir, "notify.sock")
      const child = spawn("systemd-socket-activate", ["--datagram", "-l", path, node, reader], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      const messages: Array<string> = []
      let pending = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        pending += chunk
        const lines = pending.split("\n")
        pending = lines.pop() ?? ""
        for (const line of lines) messages.push(JSON.parse(line))
      })
      // The socket exists once systemd-socket-activate says it listens.
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        if (chunk.includes("Listening on")) resume(Effect.succeed({ path, child, messages }))
      })
      child.on("error", (error) => resume(Effect.fail(error)))
    }
  ),
  ({ child, path }) =>
    Effect.sync(() => {
      child.kill("SIGKILL")
      Fs.rmSync(Path.dirname(path), { recursive: true, force: true })
    })
)

/** Waits (polling, bounded) until the reader has received `count` datagrams equal to `message`. */
const received = (messages: ReadonlyArray<string>, message: string, count = 1) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000; i++) {
      if (messages.filter((m) => m === message).length >= count) return
      yield* Effect.sleep("10 millis")
    }
    assert.fail(`expected ${count} × ${JSON.stringify(message)}; received ${JSON.stringify(messages)}`)
  })

describe.skipIf(skipWithout(TOOLS))("SdNotify against a real notification socket", () => {
  it.live("sends READY, STATUS, STOPPING and EXTEND_TIMEOUT through systemd-notify", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const socket = yield* notifySocket
        const notify = yield* makeSdNotify({ env: { NOTIFY_SOCKET: socket.path, PATH: process.env.PATH }, pid: 1 })
        assert.isTrue(notify.enabled)
        yield* notify.ready("mirroring\n12 files")
        yield* notify.status("idle")
        yield* notify.extendTimeout("30 seconds")
        yield* notify.stopping
        // systemd-notify waited for each message to be processed (the race fix): one barrier each.
        yield* received(socket.messages, "BARRIER=1", 4)
        const payloads = socket.messages.filter((m) => m !== "BARRIER=1")
        assert.deepStrictEqual(payloads, [
          "READY=1\nSTATUS=mirroring 12 files",
          "STATUS=idle",
          "EXTEND_TIMEOUT_USEC=30000000",
          "STOPPING=1"
        ])
      })
    )
  )

  it.live("pings the watchdog at half of WATCHDOG_USEC while its scope is open", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const socket = yield* notifySocket
        const notify = yield* makeSdNotify({
          env: { NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: "200000", WATCHDOG_PID: "4242", PATH: process.env.PATH },
          pid: 4242
        })
        assert.strictEqual(Duration.toMillis(notify.watchdog ?? Duration.zero), 200)
        // Pinged repeatedly, not once.
        yield* received(socket.messages, "WATCHDOG=1", 3)
      })
    )
  )

  it.live("logs a warning and does not fail when the notification cannot be delivered", () =>
    Effect.gen(function* () {
      requireTools(TOOLS)
      const notify = yield* Effect.scoped(
        makeSdNotify({ env: { NOTIFY_SOCKET: "/nonexistent/notify.sock", PATH: process.env.PATH }, pid: 1 })
      )
      yield* notify.ready()
      const lines = (yield* TestConsole.errorLines).map(String)
      assert.lengthOf(lines, 1)
      assert.include(lines[0]!, "could not notify systemd (READY)")
    }).pipe(
      Effect.provide(Layer.fresh(TestConsole.layer)),
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatSimple)]))
    )
  )
})

describe("SdNotify without a service manager", () => {
  it.effect("is a no-op: nothing is run without NOTIFY_SOCKET", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // A command that cannot run: any attempt would log a warning.
        const notify = yield* makeSdNotify({ env: { WATCHDOG_USEC: "1000" }, pid: 1, command: "/nonexistent" })
        assert.isFalse(notify.enabled)
        yield* notify.ready("x")
        yield* notify.status("x")
        yield* notify.stopping
        assert.deepStrictEqual(yield* TestConsole.errorLines, [])
      })
    ).pipe(
      Effect.provide(Layer.fresh(TestConsole.layer)),
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatSimple)]))
    )
  )

  it("reads the watchdog interval only when it is meant for this process", () => {
    assert.strictEqual(Duration.toMillis(watchdogInterval({ WATCHDOG_USEC: "30000000" }, 7) ?? Duration.zero), 30_000)
    assert.isUndefined(watchdogInterval({ WATCHDOG_USEC: "30000000", WATCHDOG_PID: "8" }, 7))
    assert.isUndefined(watchdogInterval({ WATCHDOG_USEC: "junk" }, 7))
    assert.isUndefined(watchdogInterval({}, 7))
  })
})
