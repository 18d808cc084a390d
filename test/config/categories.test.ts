import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { loadConfig } from "../../src/config/loadConfig.ts"

const load = (toml: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-categories-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(
    file,
    `[service]\nbase_url = "https://api.example.com/api/v1"\napi_key = "k"\n[mirror]\nroot = "/srv/m"\n${toml}`
  )
  return loadConfig({ path: Option.some(file), env: { HOME: "/home/u" }, cwd: "/" }).pipe(
    Effect.provide(NodeServices.layer)
  )
}

describe("[categories.<name>]", () => {
  it.effect("decodes each category's selection and cached_only, with defaults", () =>
    Effect.gen(function* () {
      const config = yield* load(
        '[categories.tv]\nselection = "largest"\ncached_only = true\n[categories.movies]\nselection = ["*2160p*", "*.mkv"]\n[categories.music]\n'
      )
      assert.deepStrictEqual(config.categories, {
        tv: { selection: "largest", cached_only: true },
        movies: { selection: ["*2160p*", "*.mkv"], cached_only: false },
        music: { selection: "all", cached_only: false }
      })
      assert.deepStrictEqual((yield* load("")).categories, {})
    })
  )

  it.effect("refuses an unknown policy or key with a configuration error", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.flip(load('[categories.tv]\nselection = "smallest"\n'))
      assert.strictEqual(bad._tag, "ConfigError")
      assert.match(bad.message, /categories\.tv\.selection/)
      const unknown = yield* Effect.flip(load("[categories.tv]\ncache_only = true\n"))
      assert.match(unknown.message, /categories\.tv\.cache_only/)
    })
  )
})
