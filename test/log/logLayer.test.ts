import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Layer, Logger, Redacted } from "effect"
import { TestConsole } from "effect/testing"
import { type LogOptions, logLayer, makeLogger } from "../../src/log/logLayer.ts"
import { makeScrubber } from "../../src/log/Scrubber.ts"

const SECRETS = {
  apiKey: "dls_test_k3y_9d8c7b6a5f4e",
  accessToken: "at_4b1c9e2f7a8d6c5e3b",
  refreshToken: "rt_0a9b8c7d6e5f4a3b2c",
  webhook: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=",
  signature: "sig0f1e2d3c4b5a69788",
  configured: "configured-key-without-prefix-77"
} as const

/** Logs every kind of secret in every place a log line takes text from, at every level. */
const leakAttempts = Effect.gen(function* () {
  const levels = [Effect.logTrace, Effect.logDebug, Effect.logInfo, Effect.logWarning, Effect.logError, Effect.logFatal]
  for (const log of levels) {
    yield* log(
      `calling with Authorization: Bearer ${SECRETS.accessToken}`,
      { refresh_token: SECRETS.refreshToken, key: Redacted.make(SECRETS.apiKey) },
      `link https://cdn.test/f/1?expires=1&signature=${SECRETS.signature}`,
      `webhook secret ${SECRETS.webhook}, key ${SECRETS.apiKey}, configured ${SECRETS.configured}`
    ).pipe(
      Effect.annotateLogs({
        fileId: "f_1",
        path: "Movies/a.mkv",
        url: `https://cdn.test/f/1?token=${SECRETS.signature}`,
        accessToken: SECRETS.accessToken,
        apiKey: Redacted.make(SECRETS.apiKey)
      })
    )
  }
  yield* Effect.logError(
    "refresh failed",
    Cause.fail(new Error(`invalid_grant for refresh_token=${SECRETS.refreshToken}`))
  )
})

const run = <A, E>(effect: Effect.Effect<A, E>, options: LogOptions) =>
  Effect.gen(function* () {
    yield* effect.pipe(Effect.provide(logLayer(options)))
    const lines = yield* TestConsole.errorLines
    return lines.map(String)
  }).pipe(Effect.provide(Layer.fresh(TestConsole.layer)))

const parse = (line: string): Record<string, unknown> => JSON.parse(line)

describe("logLayer, JSON lines", () => {
  it.effect("writes time, level, message and the annotated file id, path, request id and attempt", () =>
    Effect.gen(function* () {
      const lines = yield* run(
        Effect.logInfo("transfer finished", 3).pipe(
          Effect.annotateLogs({ attempt: 2, requestId: "req_1", path: "TV/S01/e1.mkv", fileId: "f_9", bytes: 42 })
        ),
        { level: "info", format: "json" }
      )
      assert.lengthOf(lines, 1)
      const line = lines[0]!
      assert.notInclude(line, "\n")
      const record = parse(line)
      assert.deepStrictEqual(Object.keys(record), [
        "time",
        "level",
        "message",
        "fileId",
        "path",
        "requestId",
        "attempt",
        "bytes"
      ])
      assert.strictEqual(record.time, "1970-01-01T00:00:00.000Z")
      assert.strictEqual(record.level, "info")
      assert.strictEqual(record.message, "transfer finished 3")
      assert.strictEqual(record.attempt, 2)
      assert.strictEqual(record.fileId, "f_9")
    })
  )

  it.effect("carries the cause of an error and log spans, and never lets an annotation overwrite a field", () =>
    Effect.gen(function* () {
      const lines = yield* run(
        Effect.logError("gave up", Cause.fail(new Error("connection reset"))).pipe(
          Effect.withLogSpan("pass"),
          Effect.annotateLogs({ level: "fake", message: "fake" })
        ),
        { level: "info", format: "json" }
      )
      const record = parse(lines[0]!)
      assert.strictEqual(record.level, "error")
      assert.strictEqual(record.message, "gave up")
      assert.strictEqual(record.level_, "fake")
      assert.include(String(record.cause), "connection reset")
      assert.deepStrictEqual(record.spans, { pass: 0 })
    })
  )

  it("prefixes lines with the syslog priority when writing to journald", () => {
    const lines: Array<string> = []
    const logger = makeLogger({ format: "json", colors: false, journald: true }, makeScrubber())
    Effect.runSync(
      Effect.gen(function* () {
        yield* Effect.logWarning("disk almost full")
        yield* Effect.logError("failed")
        yield* Effect.logInfo("ok")
        lines.push(...(yield* TestConsole.errorLines).map(String))
      }).pipe(Effect.provide(Logger.layer([logger])), Effect.provide(TestConsole.layer))
    )
    assert.deepStrictEqual(
      lines.map((l) => l.slice(0, 3)),
      ["<4>", "<3>", "<6>"]
    )
    assert.strictEqual(parse(lines[0]!.slice(3)).message, "disk almost full")
  })
})

describe("logLayer, text", () => {
  it.effect("writes one readable line per entry: time, level, message, key=value", () =>
    Effect.gen(function* () {
      const lines = yield* run(
        Effect.logWarning("slow link\nforged line").pipe(Effect.annotateLogs({ fileId: "f_1", path: "a b.mkv" })),
        { level: "info", format: "text" }
      )
      assert.lengthOf(lines, 1)
      assert.match(lines[0]!, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}slow link\\nforged line fileId=f_1 path="a b.mkv"$/)
    })
  )
})

describe("control characters from outside (release names, answers) never reach the terminal", () => {
  const NAME = "Show.S01E01\u001b[31mRED\u001b]0;title\u0007\u009b2J\u007f\r\ttab"
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/
  const hostile = Effect.logWarning(`intake: ${NAME} added`).pipe(
    Effect.annotateLogs({ path: NAME, release: NAME }),
    Effect.andThen(Effect.logError("refused", Cause.fail(new Error(`bad ${NAME}`))))
  )

  it.effect("text: C0, C1 and DEL are escaped in the message, the annotations and the cause; a tab stays", () =>
    Effect.gen(function* () {
      const lines = yield* run(hostile, { level: "info", format: "text" })
      assert.lengthOf(lines, 2)
      for (const line of lines) assert.notMatch(line, RAW, JSON.stringify(line))
      assert.include(lines[0], "Show.S01E01\\x1b[31mRED\\x1b]0;title\\x07\\x9b2J\\x7f\\r\ttab added")
      const [, ...cause] = lines[1]!.split("\n")
      assert.isNotEmpty(cause)
      assert.isTrue(
        cause.every((l) => l.startsWith("    ")),
        "a line break is the cause's own, indented"
      )
    })
  )

  it.effect("JSON: C1 and DEL are written as \\u escapes too; the value reads back unchanged", () =>
    Effect.gen(function* () {
      const lines = yield* run(hostile, { level: "info", format: "json" })
      for (const line of lines) assert.notMatch(line, /[\u007f-\u009f]/, JSON.stringify(line))
      assert.strictEqual(parse(lines[0]!).path, NAME)
    })
  )
})

describe("log.level", () => {
  const everyLevel = Effect.gen(function* () {
    yield* Effect.logTrace("t")
    yield* Effect.logDebug("d")
    yield* Effect.logInfo("i")
    yield* Effect.logWarning("w")
    yield* Effect.logError("e")
  })
  const levelsAt = (level: LogOptions["level"]) =>
    run(everyLevel, { level, format: "json" }).pipe(Effect.map((lines) => lines.map((l) => parse(l).message)))

  it.effect("writes the chosen level and everything more severe", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* levelsAt("trace"), ["t", "d", "i", "w", "e"])
      assert.deepStrictEqual(yield* levelsAt("debug"), ["d", "i", "w", "e"])
      assert.deepStrictEqual(yield* levelsAt("info"), ["i", "w", "e"])
      assert.deepStrictEqual(yield* levelsAt("warn"), ["w", "e"])
      assert.deepStrictEqual(yield* levelsAt("error"), ["e"])
      assert.deepStrictEqual(yield* levelsAt("off"), [])
    })
  )
})

describe("no secret in any log line", () => {
  const scrubber = { keyPrefixes: ["dls_"], secrets: [Redacted.make(SECRETS.configured)] }

  for (const format of ["json", "text"] as const) {
    it.effect(`at every level, in messages, annotations and causes (${format})`, () =>
      Effect.gen(function* () {
        const lines = yield* run(leakAttempts, { level: "trace", format, scrubber })
        assert.isAtLeast(lines.length, 7)
        const output = lines.join("\n")
        for (const [name, secret] of Object.entries(SECRETS)) assert.notInclude(output, secret, name)
        assert.include(output, "Movies/a.mkv")
        assert.include(output, "<redacted>")
      })
    )
  }

  it("in a real process writing to a pipe (JSON chosen automatically)", () => {
    const script = fileURLToPath(new URL("./fixtures/logSecrets.ts", import.meta.url))
    const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url))
    const result = spawnSync(node, [script, JSON.stringify(SECRETS)], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "" },
      timeout: 20_000
    })
    assert.strictEqual(result.status, 0, result.stderr)
    assert.strictEqual(result.stdout, "", "logs go to stderr, stdout stays for command output")
    const lines = result.stderr.trim().split("\n")
    assert.lengthOf(lines, 4)
    const records = lines.map(parse)
    assert.deepStrictEqual(
      records.map((r) => r.level),
      ["debug", "info", "warn", "error"]
    )
    assert.isTrue(records.every((r) => r.requestId === "req_7" && r.apiKey === "<redacted>"))
    for (const [name, secret] of Object.entries(SECRETS)) assert.notInclude(result.stderr, secret, name)
  })
})
