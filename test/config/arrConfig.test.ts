/**
 * `[sonarr]` and `[radarr]`: decoded (URL without its trailing "/", path_map from the file or
 * the environment as JSON), shown by `config check` with the key redacted, and a wrong value
 * refused at load with its place, the key's value never shown.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { effectiveView } from "../../src/config/effectiveView.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const BASE = '[service]\nbase_url = "https://example.test/api/v1"\napi_key = "k"\n\n[mirror]\nroot = "/srv/media"\n\n'

const load = (text: string, env: Env = {}) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, BASE + text)
  return loadConfig({ path: Option.some(file), env: { HOME: "/home/u", ...env }, cwd: "/" }).pipe(
    Effect.provide(NodeServices.layer),
    Effect.map((config) => ({ config, file }))
  )
}

describe("[sonarr] and [radarr]", () => {
  it.effect("decode, with path_map from the environment as JSON, and show redacted", () =>
    Effect.gen(function* () {
      const { config } = yield* load(
        '[sonarr]\nurl = "http://sonarr:8989/sonarr/"\napi_key = "sonarr-key"\npath_map = [["/srv/media", "/data"]]\n',
        {
          DLSYNC_RADARR_URL: "http://radarr:7878",
          DLSYNC_RADARR_API_KEY: "radarr-key",
          DLSYNC_RADARR_PATH_MAP: '[["/srv/media", "/movies"]]'
        }
      )
      assert.strictEqual(config.sonarr?.url, "http://sonarr:8989/sonarr")
      assert.strictEqual(Redacted.value(config.sonarr!.api_key), "sonarr-key")
      assert.deepStrictEqual(config.sonarr?.path_map, [["/srv/media", "/data"]])
      assert.deepStrictEqual(config.radarr?.path_map, [["/srv/media", "/movies"]])
      const view = JSON.stringify(effectiveView(config))
      assert.include(view, '"sonarr":{"url":"http://sonarr:8989/sonarr","api_key":"<redacted>"')
      assert.notInclude(view, "sonarr-key")
      assert.notInclude(view, "radarr-key")
    })
  )

  it.effect("off when absent; a section without its key refused at load, naming it", () =>
    Effect.gen(function* () {
      const { config } = yield* load("")
      assert.isNull(config.sonarr)
      assert.isNull(config.radarr)
      const error = yield* Effect.flip(load('[radarr]\nurl = "radarr:7878"\n'))
      assert.include(error.message, "radarr.url: Expected an http:// or https:// URL")
      assert.include(error.message, "radarr.api_key: required key is missing")
    })
  )
})
