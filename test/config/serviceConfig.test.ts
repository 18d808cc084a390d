/**
 * The `[log]` and `[server]` sections: defaults, file values, DLSYNC_LOG_* and
 * DLSYNC_SERVER_LISTEN overrides, errors naming the key, and `config check`'s view.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { effectiveView } from "../../src/config/effectiveView.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const BASE = `
[service]
base_url = "https://example.test/api/v1"

[mirror]
root = "/media"
`

const GENERATED = "generated at the first start"

const load = (text: string, env: Env = {}, dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))) => {
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, text)
  return loadConfig({ path: Option.some(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )
}

describe("[log] and [server]", () => {
  it.effect("default to info, auto and 127.0.0.1:7660", () =>
    Effect.gen(function* () {
      const config = yield* load(BASE)
      assert.deepStrictEqual(config.log, { level: "info", format: "auto" })
      assert.deepStrictEqual(config.server.listen, { host: "127.0.0.1", port: 7660 })
      const view = effectiveView(config).settings
      assert.deepStrictEqual(view.log, { level: "info", format: "auto" })
      assert.deepStrictEqual(view.server, { listen: "127.0.0.1:7660", allowed_hosts: [], password: GENERATED })
    })
  )

  it.effect("read the file's values", () =>
    Effect.gen(function* () {
      const config = yield* load(
        `${BASE}\n[log]\nlevel = "debug"\nformat = "json"\n\n[server]\nlisten = "[::1]:9000"\n`
      )
      assert.deepStrictEqual(config.log, { level: "debug", format: "json" })
      assert.deepStrictEqual(config.server.listen, { host: "::1", port: 9000 })
      assert.deepStrictEqual(effectiveView(config).settings.server, {
        listen: "[::1]:9000",
        allowed_hosts: [],
        password: GENERATED
      })
    })
  )

  it.effect("are overridden by DLSYNC_LOG_LEVEL, DLSYNC_LOG_FORMAT and DLSYNC_SERVER_LISTEN", () =>
    Effect.gen(function* () {
      const config = yield* load(`${BASE}\n[log]\nlevel = "debug"\n\n[server]\nlisten = "127.0.0.1:9000"\n`, {
        DLSYNC_LOG_LEVEL: "warn",
        DLSYNC_LOG_FORMAT: "text",
        DLSYNC_SERVER_LISTEN: "off"
      })
      assert.deepStrictEqual(config.log, { level: "warn", format: "text" })
      assert.strictEqual(config.server.listen, "off")
      assert.deepStrictEqual(effectiveView(config).settings.server, {
        listen: "off",
        allowed_hosts: [],
        password: GENERATED
      })
      const everywhere = yield* load(BASE, { DLSYNC_SERVER_LISTEN: ":8080" })
      assert.deepStrictEqual(everywhere.server.listen, { host: undefined, port: 8080 })
    })
  )

  it.effect("server.allowed_hosts from the file and DLSYNC_SERVER_ALLOWED_HOSTS, shown by config check", () =>
    Effect.gen(function* () {
      const config = yield* load(`${BASE}\n[server]\nallowed_hosts = ["nas.lan", "nas"]\n`)
      assert.deepStrictEqual(config.server.allowed_hosts, ["nas.lan", "nas"])
      assert.deepStrictEqual(effectiveView(config).settings.server, {
        listen: "127.0.0.1:7660",
        allowed_hosts: ["nas.lan", "nas"],
        password: GENERATED
      })
      const overridden = yield* load(BASE, { DLSYNC_SERVER_ALLOWED_HOSTS: "dlsync.home" })
      assert.deepStrictEqual(effectiveView(overridden).settings.server.allowed_hosts, ["dlsync.home"])
    })
  )

  it.effect("reject a bad value, naming the key and where it came from", () =>
    Effect.gen(function* () {
      const level = yield* Effect.flip(load(BASE, { DLSYNC_LOG_LEVEL: "loud" }))
      assert.deepInclude(
        level.problems.map((p) => [p.key, p.source]),
        ["log.level", "DLSYNC_LOG_LEVEL"]
      )
      const port = yield* Effect.flip(load(BASE, { DLSYNC_SERVER_LISTEN: "7660" }))
      const problem = port.problems.find((p) => p.key === "server.listen")
      assert.strictEqual(problem?.source, "DLSYNC_SERVER_LISTEN")
      assert.include(problem?.message, "bare port")
      const inFile = yield* Effect.flip(load(`${BASE}\n[server]\nlisten = 7660\n`))
      const fromFile = inFile.problems.find((p) => p.key === "server.listen")
      assert.match(fromFile?.source ?? "", /config\.toml:9$/)
    })
  )

  it.effect("the web page's password: from server.password_file or server.password_hash, never shown", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
      Fs.writeFileSync(Path.join(dir, "web-password"), "correct horse\n")
      const fromFile = yield* load(`${BASE}\n[server]\npassword_file = "web-password"\n`, {}, dir)
      assert.strictEqual(fromFile.server.password?._tag, "Plain")
      assert.strictEqual(effectiveView(fromFile).settings.server.password, "<redacted>")
      assert.notInclude(JSON.stringify(effectiveView(fromFile)), "correct horse")

      const hash = "$scrypt$ln=14,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g="
      const hashed = yield* load(`${BASE}\n[server]\npassword_hash = '${hash}'\n`)
      assert.strictEqual(hashed.server.password?._tag, "Hash")
      assert.notInclude(JSON.stringify(effectiveView(hashed)), hash)

      const bad = yield* Effect.flip(load(`${BASE}\n[server]\npassword_hash = "hunter2"\n`))
      assert.include(bad.message, "server.password_hash")
      assert.include(bad.message, "$scrypt$")
      assert.notInclude(bad.message, "hunter2")
      const both = yield* Effect.flip(
        load(`${BASE}\n[server]\npassword_file = "web-password"\npassword_hash = '${hash}'\n`, {}, dir)
      )
      assert.include(both.message, "not both")
    })
  )
})
