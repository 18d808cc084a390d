import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { loadConfig } from "../../src/config/loadConfig.ts"

describe("config.example.toml", () => {
  it.effect("is a valid configuration as shipped", () =>
    Effect.gen(function* () {
      const file = Path.resolve(import.meta.dirname, "../../config.example.toml")
      const config = yield* loadConfig({ path: Option.some(file), env: { HOME: "/home/u" }, cwd: "/" })
      assert.strictEqual(config.mirror.root, "/srv/dlsync")
    }).pipe(Effect.provide(NodeServices.layer))
  )
})
