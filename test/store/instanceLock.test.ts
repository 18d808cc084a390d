import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { acquireInstanceLock, LOCK_FILE, liveLockHolder } from "../../src/store/instanceLock.ts"
import { tempDir } from "./helpers.ts"

const HOLDER = Path.join(import.meta.dirname, "fixtures", "holdLock.ts")

/** Starts a child that holds the lock; resolves once it says so. */
const spawnHolder = (dir: string) =>
  Effect.callback<ChildProcess.ChildProcess>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [HOLDER, dir], { stdio: ["pipe", "pipe", "inherit"] })
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      if (chunk.includes("locked")) resume(Effect.succeed(child))
    })
    child.on("exit", (code) => resume(Effect.die(new Error(`holder exited early with ${code}`))))
  })

const exited = (child: ChildProcess.ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) resume(Effect.void)
    else child.on("exit", () => resume(Effect.void))
  })

describe("instance lock", () => {
  it.live("a second process is refused with the holder's pid; a killed holder's lock is taken over", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const child = yield* spawnHolder(dir)
      const error = yield* Effect.flip(Effect.scoped(acquireInstanceLock(dir)))
      assert.strictEqual(error._tag, "InstanceLocked")
      if (error._tag === "InstanceLocked") {
        assert.strictEqual(error.pid, child.pid)
        assert.include(error.message, `pid ${child.pid}`)
      }
      assert.strictEqual(liveLockHolder(dir), child.pid)
      child.kill("SIGKILL")
      yield* exited(child)
      assert.isTrue(Fs.existsSync(Path.join(dir, LOCK_FILE)), "a killed holder leaves its lock file")
      assert.isUndefined(liveLockHolder(dir), "a killed holder holds nothing")
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* acquireInstanceLock(dir)
          assert.include(Fs.readFileSync(Path.join(dir, LOCK_FILE), "utf8"), String(process.pid))
          assert.strictEqual(liveLockHolder(dir), process.pid)
        })
      )
      assert.isFalse(Fs.existsSync(Path.join(dir, LOCK_FILE)), "released with the scope")
      assert.isUndefined(liveLockHolder(dir))
    })
  )

  it.live("a holder that exits cleanly releases the lock", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const child = yield* spawnHolder(dir)
      child.stdin?.end()
      yield* exited(child)
      assert.strictEqual(child.exitCode, 0)
      assert.isFalse(Fs.existsSync(Path.join(dir, LOCK_FILE)))
    })
  )

  it.effect("is refused to a second holder in the same process", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = tempDir()
        yield* acquireInstanceLock(dir)
        const error = yield* Effect.flip(Effect.scoped(acquireInstanceLock(dir)))
        assert.strictEqual(error._tag, "InstanceLocked")
      })
    )
  )

  it.effect("takes over a lock file that names no live process", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      Fs.writeFileSync(Path.join(dir, LOCK_FILE), "not a pid\n")
      yield* Effect.scoped(acquireInstanceLock(dir))
      Fs.writeFileSync(Path.join(dir, LOCK_FILE), `${process.pid}\n`)
      yield* Effect.scoped(acquireInstanceLock(dir))
      assert.isFalse(Fs.existsSync(Path.join(dir, LOCK_FILE)))
    })
  )
})
