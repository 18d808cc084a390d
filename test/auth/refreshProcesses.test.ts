/**
 * Token rotation across real processes sharing one state dir: two processes refreshing at
 * the same moment both stay signed in, and a process SIGKILLed during a refresh leaves a
 * working token or a clear "login required" (never a torn file or a stuck lock).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Schema } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { isLoginRequired } from "../../src/auth/AuthError.ts"
import { TOKEN_LOCK_FILE } from "../../src/auth/TokenStore.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { spawnChild } from "./support/child.ts"
import {
  countRequests,
  oauthClientLayer,
  readTokens,
  seedTokens,
  useEmulator,
  useStateDir
} from "./support/fixtures.ts"

const CHILD = Path.resolve("test/auth/support/refreshChild.ts")

const Result = Schema.fromJsonString(
  Schema.Struct({
    ok: Schema.Boolean,
    loginRequired: Schema.Boolean,
    accountId: Schema.optionalKey(Schema.String),
    error: Schema.optionalKey(Schema.String)
  })
)

const child = (e: RunningEmulator, stateDir: string, mode: "once" | "rotate") =>
  spawnChild(CHILD, [JSON.stringify({ stateDir, baseUrl: e.baseUrl, authUrl: e.authUrl, mode })])

const resultOf = (lines: ReadonlyArray<string>) => Schema.decodeUnknownSync(Result)(lines.at(-1) ?? "")

/** What a fresh process would get now: the account id, or "login required". */
const probe = (e: RunningEmulator, stateDir: string) =>
  Effect.gen(function* () {
    return yield* (yield* ApiClient).account.get
  }).pipe(
    Effect.provide(oauthClientLayer(e, stateDir), { local: true }),
    Effect.map((a) => a.id),
    Effect.catch((error) => Effect.succeed(isLoginRequired(error) ? "login required" : `error: ${error.message}`))
  )

describe("token refresh across processes", () => {
  it.live(
    "two processes refreshing at the same moment both stay signed in",
    () =>
      Effect.gen(function* () {
        const e = yield* useEmulator()
        const dir = yield* useStateDir
        yield* seedTokens(e, dir, { expiresAtMs: Date.now() - 1_000 })
        const a = yield* child(e, dir, "once")
        const b = yield* child(e, dir, "once")
        yield* Effect.promise(() =>
          Promise.all([a.waitForLine((l) => l === "ready"), b.waitForLine((l) => l === "ready")])
        )
        a.process.stdin.write("go\n")
        b.process.stdin.write("go\n")
        const codes = yield* Effect.promise(() => Promise.all([a.exited, b.exited]))
        assert.deepStrictEqual(codes, [0, 0], a.stderr() + b.stderr())
        for (const c of [a, b]) {
          const result = resultOf(c.lines)
          assert.isTrue(result.ok, result.error)
          assert.strictEqual(result.accountId, e.state.primaryUser.id)
        }
        // One process rotated; the other reused what it stored instead of burning the old token.
        assert.strictEqual(countRequests(e, "POST", "/oauth/token"), 1)
        assert.strictEqual(yield* probe(e, dir), e.state.primaryUser.id)
        assert.isFalse(Fs.existsSync(Path.join(dir, TOKEN_LOCK_FILE)))
      }),
    20_000
  )

  it.live(
    "SIGKILL after the service rotated but before the answer was stored: a clear login required",
    () =>
      Effect.gen(function* () {
        const e = yield* useEmulator()
        const dir = yield* useStateDir
        const seeded = yield* seedTokens(e, dir, { expiresAtMs: Date.now() - 1_000 })
        // The token endpoint rotates at once but sends its answer at 1 byte per second.
        e.control.addFault({ kind: "slow", path: "/oauth/token", method: "POST", bytesPerSecond: 1 })
        const c = yield* child(e, dir, "once")
        yield* Effect.promise(() => c.waitForLine((l) => l === "ready"))
        c.process.stdin.write("go\n")
        yield* Effect.promise(() => waitUntil(() => countRequests(e, "POST", "/oauth/token") === 1))
        assert.isTrue(Fs.existsSync(Path.join(dir, TOKEN_LOCK_FILE)))
        c.process.kill("SIGKILL")
        yield* Effect.promise(() => c.exited)

        // The file still holds the old pair (whole), the lock is stale, and the old token is dead.
        const stored = yield* readTokens(dir)
        assert.strictEqual(Redacted.value(stored!.refreshToken), Redacted.value(seeded.refreshToken))
        assert.strictEqual(yield* probe(e, dir), "login required")
      }),
    20_000
  )

  it.live(
    "SIGKILL at any point of repeated rotations leaves a working token or a clear login required",
    () =>
      Effect.gen(function* () {
        // Three independent runs in parallel, each killed after a different number of rotations.
        const outcomes = yield* Effect.forEach(
          [1, 4, 9],
          (rotationsBeforeKill) =>
            Effect.gen(function* () {
              const e = yield* useEmulator()
              const dir = yield* useStateDir
              yield* seedTokens(e, dir)
              const c = yield* child(e, dir, "rotate")
              yield* Effect.promise(() => c.waitForLine((l) => l === "ready"))
              c.process.stdin.write("go\n")
              yield* Effect.promise(() =>
                waitUntil(() => c.lines.filter((l) => l === "rotated").length >= rotationsBeforeKill)
              )
              c.process.kill("SIGKILL")
              yield* Effect.promise(() => c.exited)
              const outcome = yield* probe(e, dir)
              assert.isTrue(outcome === e.state.primaryUser.id || outcome === "login required", outcome)
              return outcome
            }),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.length, 3)
      }),
    30_000
  )
})

/** Polls a condition on this process's own state (the emulator runs here) until it holds. */
const waitUntil = async (condition: () => boolean): Promise<void> => {
  for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve))
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!condition()) throw new Error("condition never held")
}
