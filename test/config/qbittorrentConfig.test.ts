/** `[qbittorrent]`: off unless configured, loopback by default, a password (inline or in a file) required and never shown. */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { ConfigError } from "../../src/config/ConfigError.ts"
import { effectiveView } from "../../src/config/effectiveView.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const dir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))

const write = (text: string, folder = dir()) => {
  const file = Path.join(folder, "config.toml")
  Fs.writeFileSync(file, text)
  return file
}

const load = (file: string, env: Env = {}) =>
  loadConfig({ path: Option.some(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )

const problems = (e: ConfigError) => e.problems.map((p) => `${p.key}: ${p.message}`)

const BASE = `[service]\nbase_url = "https://x.test/api/v1"\n[mirror]\nroot = "/m"\n`
const SECRET = "s3cret pass"

describe("[qbittorrent]", () => {
  it.effect('off without the section, and with listen = "off"', () =>
    Effect.gen(function* () {
      assert.isNull((yield* load(write(BASE))).qbittorrent)
      assert.deepStrictEqual(effectiveView(yield* load(write(BASE))).settings.qbittorrent, { listen: "off" })
      assert.isNull((yield* load(write(`${BASE}[qbittorrent]\nlisten = "off"\n`))).qbittorrent)
    })
  )

  it.effect("on: 127.0.0.1:7662 by default; the password redacted in config check", () =>
    Effect.gen(function* () {
      const config = yield* load(write(`${BASE}[qbittorrent]\nusername = "arr"\npassword = "${SECRET}"\n`))
      assert.deepStrictEqual(config.qbittorrent?.listen, { host: "127.0.0.1", port: 7662 })
      assert.strictEqual(config.qbittorrent?.username, "arr")
      assert.strictEqual(Redacted.value(config.qbittorrent?.password ?? Redacted.make("")), SECRET)
      const view = effectiveView(config).settings.qbittorrent
      assert.deepStrictEqual(view, { listen: "127.0.0.1:7662", username: "arr", password: "<redacted>", path_map: [] })
      assert.notInclude(JSON.stringify(effectiveView(config)), SECRET)
    })
  )

  it.effect("password_file: read, one line, relative to the config file; not both", () =>
    Effect.gen(function* () {
      const folder = dir()
      Fs.writeFileSync(Path.join(folder, "qbit.pass"), `${SECRET}\n`)
      const config = yield* load(write(`${BASE}[qbittorrent]\nusername = "arr"\npassword_file = "qbit.pass"\n`, folder))
      assert.strictEqual(Redacted.value(config.qbittorrent?.password ?? Redacted.make("")), SECRET)
      const both = yield* Effect.flip(
        load(write(`${BASE}[qbittorrent]\nusername = "a"\npassword = "x"\npassword_file = "qbit.pass"\n`, folder))
      )
      assert.deepStrictEqual(problems(both), [
        "qbittorrent.password_file: set qbittorrent.password or qbittorrent.password_file, not both"
      ])
      Fs.writeFileSync(Path.join(folder, "two.pass"), "a\nb\n")
      const two = yield* Effect.flip(
        load(write(`${BASE}[qbittorrent]\nusername = "a"\npassword_file = "two.pass"\n`, folder))
      )
      assert.match(problems(two)[0] ?? "", /holds more than one line/)
    })
  )

  it.effect("a user name and a password are required once the section is there", () =>
    Effect.gen(function* () {
      const noUser = yield* Effect.flip(load(write(`${BASE}[qbittorrent]\npassword = "x"\n`)))
      assert.match(
        problems(noUser)[0] ?? "",
        /^qbittorrent\.username: set qbittorrent\.username and qbittorrent\.password/
      )
      const noPassword = yield* Effect.flip(load(write(`${BASE}[qbittorrent]\nusername = "a"\n`)))
      assert.match(problems(noPassword)[0] ?? "", /^qbittorrent\.password: set qbittorrent\.password or/)
    })
  )

  it.effect("a wrongly typed password is reported without its value", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(load(write(`${BASE}[qbittorrent]\nusername = "a"\npassword = 123456789\n`)))
      assert.notInclude(error.message, "123456789")
      assert.include(error.message, "qbittorrent.password")
    })
  )

  it.effect("listen and path_map from the file and the environment (path_map as JSON)", () =>
    Effect.gen(function* () {
      const file = write(
        `${BASE}[qbittorrent]\nusername = "a"\npassword = "p"\nlisten = "0.0.0.0:9090"\npath_map = [["/srv/media", "/data"]]\n`
      )
      const fromFile = yield* load(file)
      assert.deepStrictEqual(fromFile.qbittorrent?.listen, { host: "0.0.0.0", port: 9090 })
      assert.deepStrictEqual(fromFile.qbittorrent?.path_map, [["/srv/media", "/data"]])
      const fromEnv = yield* load(file, {
        DLSYNC_QBITTORRENT_LISTEN: "[::1]:8081",
        DLSYNC_QBITTORRENT_PATH_MAP: '[["/mnt/a", "D:\\\\media"]]'
      })
      assert.deepStrictEqual(fromEnv.qbittorrent?.listen, { host: "::1", port: 8081 })
      assert.deepStrictEqual(fromEnv.qbittorrent?.path_map, [["/mnt/a", "D:\\media"]])
      const relative = yield* Effect.flip(
        load(write(`${BASE}[qbittorrent]\nusername = "a"\npassword = "p"\npath_map = [["media", "/data"]]\n`))
      )
      assert.include(relative.message, "qbittorrent.path_map")
    })
  )
})
