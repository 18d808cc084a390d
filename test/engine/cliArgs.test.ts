/** The CLI's small pure helpers: the `--once` shortcut and restore paths. */
import { assert, describe, it } from "@effect/vitest"
import { onceShortcut } from "../../src/cli/run.ts"
import { relativeToRoot, WHOLE_MIRROR } from "../../src/commands/restore.ts"

describe("cli arguments", () => {
  it("`dlsync --once` is `run --once`; other command lines are left alone", () => {
    const names = ["run", "status", "restore"]
    assert.deepStrictEqual(onceShortcut(["--once"], names), ["run", "--once"])
    assert.deepStrictEqual(onceShortcut(["--config", "c.toml", "--once"], names), [
      "run",
      "--config",
      "c.toml",
      "--once"
    ])
    assert.deepStrictEqual(onceShortcut(["run", "--once"], names), ["run", "--once"])
    assert.deepStrictEqual(onceShortcut(["status"], names), ["status"])
  })

  it("restore paths are store paths inside the root", () => {
    assert.strictEqual(relativeToRoot("/m", "/m/a/b.txt"), "a/b.txt")
    assert.strictEqual(relativeToRoot("/m", "a/b/"), "a/b")
    assert.isUndefined(relativeToRoot("/m", "/etc/passwd"))
    assert.isUndefined(relativeToRoot("/m", "../x"))
    assert.strictEqual(relativeToRoot("/m", "/m"), WHOLE_MIRROR)
    assert.strictEqual(relativeToRoot("/m", "."), WHOLE_MIRROR)
    assert.strictEqual(relativeToRoot("/m", "/"), WHOLE_MIRROR)
    assert.isUndefined(relativeToRoot("/m", "/m/../n/x"))
    // A name starting with two dots is an ordinary name inside the root.
    assert.strictEqual(relativeToRoot("/m", "..hidden"), "..hidden")
    assert.strictEqual(relativeToRoot("/m", "/m/...txt"), "...txt")
  })
})
