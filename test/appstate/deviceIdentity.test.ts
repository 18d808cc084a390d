/** The device id: created once per state dir (0600), stable across loads, agreed on by concurrent creators. */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { DEVICE_ID_FILE, deviceName, loadDeviceId } from "../../src/appstate/deviceIdentity.ts"
import { useStateDir } from "../auth/support/fixtures.ts"

describe("device identity", () => {
  it.effect("is created once, 0600, and stays the same", () =>
    Effect.gen(function* () {
      const dir = Path.join(yield* useStateDir, "state")
      const first = yield* loadDeviceId(dir)
      assert.match(first, /^[0-9a-f-]{36}$/)
      assert.strictEqual(yield* loadDeviceId(dir), first)
      assert.strictEqual((Fs.statSync(Path.join(dir, DEVICE_ID_FILE)).mode & 0o777).toString(8), "600")
      assert.deepStrictEqual(Fs.readdirSync(dir), [DEVICE_ID_FILE])
    })
  )

  it.effect("repeated loads agree on one id; a corrupt file is replaced", () =>
    Effect.gen(function* () {
      const dir = yield* useStateDir
      const ids = yield* Effect.all(Array.from({ length: 8 }, () => loadDeviceId(dir)))
      assert.strictEqual(new Set(ids).size, 1)
      Fs.writeFileSync(Path.join(dir, DEVICE_ID_FILE), "garbage")
      const replaced = yield* loadDeviceId(dir)
      assert.notStrictEqual(replaced, ids[0])
      assert.strictEqual(yield* loadDeviceId(dir), replaced)
    })
  )

  it("the name is the configured one, else the host name", () => {
    assert.strictEqual(deviceName(" living-room nas "), "living-room nas")
    assert.strictEqual(deviceName(undefined), Os.hostname())
    assert.strictEqual(deviceName("  "), Os.hostname())
  })
})
