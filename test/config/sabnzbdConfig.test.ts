/**
 * The `[sabnzbd]` and `[blackhole]` sections: off unless configured, this host by default,
 * the API key from the file or a file of its own (never echoed), path_map in TOML and in
 * the environment, and `config check`'s view.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { effectiveView } from "../../src/config/effectiveView.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const BASE = `
[service]
base_url = "https://example.test/api/v1"

[mirror]
root = "/media"
`

const load = (text: string, env: Env = {}, files: Readonly<Record<string, string>> = {}) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
  for (const [name, content] of Object.entries(files)) Fs.writeFileSync(Path.join(dir, name), content)
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, text)
  return loadConfig({ path: Option.some(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )
}

const problems = (text: string, env: Env = {}, files: Readonly<Record<string, string>> = {}) =>
  Effect.map(Effect.flip(load(text, env, files)), (error) => error.problems.map((p) => `${p.key}: ${p.message}`))

describe("[sabnzbd]", () => {
  it.effect("is off without the section, and off with a section that has no key", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* load(BASE)).sabnzbd.listen, "off")
      assert.strictEqual((yield* load(`${BASE}\n[sabnzbd]\npath_map = []\n`)).sabnzbd.listen, "off")
      assert.deepStrictEqual(effectiveView(yield* load(BASE)).settings.sabnzbd, {
        listen: "off",
        api_key: null,
        path_map: [],
        categories: []
      })
    })
  )

  it.effect("with an API key listens on 127.0.0.1:7663 unless told otherwise; the key is never shown", () =>
    Effect.gen(function* () {
      const config = yield* load(
        `${BASE}\n[sabnzbd]\napi_key = "k123"\npath_map = [["/media", "/data"]]\ncategories = ["tv", "movies"]\n`
      )
      assert.deepStrictEqual(config.sabnzbd.listen, { host: "127.0.0.1", port: 7663 })
      assert.strictEqual(Redacted.value(Option.getOrThrow(config.sabnzbd.apiKey)), "k123")
      assert.deepStrictEqual(config.sabnzbd.pathMap, [["/media", "/data"]])
      assert.deepStrictEqual(effectiveView(config).settings.sabnzbd, {
        listen: "127.0.0.1:7663",
        api_key: "<redacted>",
        path_map: [["/media", "/data"]],
        categories: ["tv", "movies"]
      })
      const moved = yield* load(`${BASE}\n[sabnzbd]\napi_key = "k"\nlisten = "0.0.0.0:9090"\n`)
      assert.deepStrictEqual(moved.sabnzbd.listen, { host: "0.0.0.0", port: 9090 })
    })
  )

  it.effect("reads api_key_file beside the config, and the environment's key and path_map", () =>
    Effect.gen(function* () {
      const fromFile = yield* load(`${BASE}\n[sabnzbd]\napi_key_file = "sab.key"\n`, {}, { "sab.key": "s3cret\n" })
      assert.strictEqual(Redacted.value(Option.getOrThrow(fromFile.sabnzbd.apiKey)), "s3cret")
      const fromEnv = yield* load(BASE, {
        DLSYNC_SABNZBD_API_KEY: "envkey",
        DLSYNC_SABNZBD_PATH_MAP: '[["/media", "/data"], ["/media/tv", "/tv"]]'
      })
      assert.strictEqual(Redacted.value(Option.getOrThrow(fromEnv.sabnzbd.apiKey)), "envkey")
      assert.deepStrictEqual(fromEnv.sabnzbd.pathMap, [
        ["/media", "/data"],
        ["/media/tv", "/tv"]
      ])
    })
  )

  it.effect("refuses a listen without a key, both key forms, an empty key file and a bad path_map", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* problems(`${BASE}\n[sabnzbd]\nlisten = "127.0.0.1:7663"\n`), [
        "sabnzbd.api_key: required when sabnzbd.listen is set (the apps send it with every call): set api_key or api_key_file"
      ])
      assert.deepStrictEqual(
        yield* problems(`${BASE}\n[sabnzbd]\napi_key = "a"\napi_key_file = "k"\n`, {}, { k: "b" }),
        ["sabnzbd.api_key_file: set sabnzbd.api_key or sabnzbd.api_key_file, not both"]
      )
      const empty = yield* problems(`${BASE}\n[sabnzbd]\napi_key_file = "k"\n`, {}, { k: "\n" })
      assert.match(empty[0] ?? "", /^sabnzbd\.api_key_file: .*k is empty$/)
      const map = yield* problems(`${BASE}\n[sabnzbd]\napi_key = "a"\npath_map = [["relative", "/x"]]\n`)
      assert.match(map.join("\n"), /sabnzbd\.path_map/)
      const secret = yield* problems(`${BASE}\n[sabnzbd]\napi_key = 12345\n`)
      assert.notInclude(secret.join("\n"), "12345")
    })
  )
})

describe("[blackhole]", () => {
  it.effect("watch is off by default, and resolved beside the config file", () =>
    Effect.gen(function* () {
      assert.isUndefined((yield* load(BASE)).blackhole.watch)
      const config = yield* load(`${BASE}\n[blackhole]\nwatch = "drop"\n`)
      assert.isTrue(Path.isAbsolute(config.blackhole.watch ?? ""))
      assert.strictEqual(Path.basename(config.blackhole.watch ?? ""), "drop")
      assert.strictEqual((yield* load(BASE, { DLSYNC_BLACKHOLE_WATCH: "/srv/drop" })).blackhole.watch, "/srv/drop")
    })
  )
})
