/** The token file: 0600, atomic, redacted, and the refresh lock's stale-holder detection. */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { withFileLock } from "../../src/auth/fileLock.ts"
import { makeTokenStore, type StoredTokens, TOKEN_FILE, TOKEN_LOCK_FILE } from "../../src/auth/TokenStore.ts"
import { useStateDir } from "./support/fixtures.ts"

const tokens: StoredTokens = {
  accessToken: Redacted.make("at_secret_access"),
  refreshToken: Redacted.make("rt_secret_refresh"),
  expiresAtMs: 2_000_000,
  lifetimeSeconds: 3600,
  obtainedAtMs: 1_000_000,
  authUrl: "https://svc.example",
  clientId: "6f1c2a0e-3b1d-4c55-9a57-0d1e2f3a4b5c",
  scopes: ["user:read"]
}

const mode = (file: string) => (Fs.statSync(file).mode & 0o777).toString(8)

describe("TokenStore", () => {
  it.effect("writes a 0600 file in a 0700 dir, reads it back redacted, and clears it", () =>
    Effect.gen(function* () {
      const root = yield* useStateDir
      const dir = Path.join(root, "state")
      const store = makeTokenStore(dir)
      assert.isTrue(Option.isNone(yield* store.read))
      yield* store.write(tokens)
      assert.strictEqual(mode(Path.join(dir, TOKEN_FILE)), "600")
      assert.strictEqual(mode(dir), "700")
      assert.deepStrictEqual(Fs.readdirSync(dir), [TOKEN_FILE])
      const read = Option.getOrThrow(yield* store.read)
      assert.strictEqual(Redacted.value(read.refreshToken), "rt_secret_refresh")
      assert.notInclude(String(read.accessToken), "at_secret_access")
      assert.notInclude(JSON.stringify(read), "secret")
      assert.isTrue(yield* store.clear)
      assert.isFalse(yield* store.clear)
      assert.isTrue(Option.isNone(yield* store.read))
    })
  )

  it.effect("narrows a widened file back to 0600 and refuses a corrupt one with a typed error", () =>
    Effect.gen(function* () {
      const dir = yield* useStateDir
      const store = makeTokenStore(dir)
      yield* store.write(tokens)
      Fs.chmodSync(Path.join(dir, TOKEN_FILE), 0o644)
      yield* store.read
      assert.strictEqual(mode(Path.join(dir, TOKEN_FILE)), "600")
      Fs.writeFileSync(Path.join(dir, TOKEN_FILE), "{not json")
      const error = yield* Effect.flip(store.read)
      assert.strictEqual(error._tag, "TokenStoreError")
      assert.notInclude(error.message, "secret")
    })
  )

  it.effect("a temp file left by a writer that died is removed by the next write", () =>
    Effect.gen(function* () {
      const dir = yield* useStateDir
      const deadPid = yield* Effect.promise(deadProcessPid)
      Fs.writeFileSync(Path.join(dir, `${TOKEN_FILE}.tmp-${deadPid}-abc`), "half")
      yield* makeTokenStore(dir).write(tokens)
      assert.deepStrictEqual(Fs.readdirSync(dir), [TOKEN_FILE])
    })
  )
})

describe("refresh lock", () => {
  it.live("takes over a lock left by a dead process", () =>
    Effect.gen(function* () {
      const dir = yield* useStateDir
      const lock = Path.join(dir, TOKEN_LOCK_FILE)
      const deadPid = yield* Effect.promise(deadProcessPid)
      Fs.writeFileSync(lock, `${deadPid}\n\nnonce\n`)
      const ran = yield* withFileLock(lock, Effect.succeed("ran"), { pollMs: 5, timeoutMs: 1_000 })
      assert.strictEqual(ran, "ran")
      assert.isFalse(Fs.existsSync(lock))
    })
  )

  it.live("waits for a live holder and names it when the wait is too long", () =>
    Effect.gen(function* () {
      const dir = yield* useStateDir
      const lock = Path.join(dir, TOKEN_LOCK_FILE)
      // The parent of this test process is alive and is not us.
      Fs.writeFileSync(lock, `${process.ppid}\n\nnonce\n`)
      const error = yield* Effect.flip(withFileLock(lock, Effect.void, { pollMs: 5, timeoutMs: 50 }))
      assert.strictEqual(error._tag, "TokenStoreError")
      assert.include(error.message, `pid ${process.ppid}`)
      assert.isTrue(Fs.existsSync(lock))
    })
  )

  it.live("serializes holders in one process", () =>
    Effect.gen(function* () {
      const dir = yield* useStateDir
      const lock = Path.join(dir, TOKEN_LOCK_FILE)
      const events: Array<string> = []
      const section = (name: string) =>
        withFileLock(
          lock,
          Effect.gen(function* () {
            events.push(`${name} in`)
            yield* Effect.yieldNow
            yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
            events.push(`${name} out`)
          }),
          { pollMs: 1, timeoutMs: 5_000 }
        )
      yield* Effect.all([section("a"), section("b"), section("c")], { concurrency: "unbounded" })
      for (let i = 0; i < events.length; i += 2) {
        assert.strictEqual(events[i]!.split(" ")[0], events[i + 1]!.split(" ")[0])
      }
    })
  )
})

/** The pid of a process that has exited (so nothing is alive with it for a while). */
const deadProcessPid = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve(child.pid ?? 0))
  })
