import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { ConfigError } from "../../src/config/ConfigError.ts"
import { effectiveView } from "../../src/config/effectiveView.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"
import { downloadWebhookUrl } from "../../src/config/webhooksSettings.ts"

const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const NEW = "whsec_5u0wJCNVdD3yoHQ0SAZF2MU1+FN1DIa3d4zyUZ1GEUs="

const BASE = `
[service]
base_url = "https://example.test/api/v1"
api_key = "sk_live_abc"

[mirror]
root = "/media"
`

const configFile = (webhooks: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, `${BASE}\n[webhooks]\n${webhooks}\n`)
  return file
}

const load = (file: string, env: Env = {}) =>
  loadConfig({ path: Option.some(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )

const problems = (e: ConfigError) => e.problems.map((p) => `${p.key}: ${p.message}`)

const secrets = (config: { readonly webhooks: { readonly secrets: ReadonlyArray<Redacted.Redacted<string>> } }) =>
  config.webhooks.secrets.map(Redacted.value)

describe("[webhooks] configuration", () => {
  it.effect("is off without the section: no receiver, no webhook_url on downloads", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
      Fs.writeFileSync(Path.join(dir, "config.toml"), BASE)
      const config = yield* load(Path.join(dir, "config.toml"))
      assert.deepStrictEqual(config.webhooks, { listen: "off", secrets: [], public_url: null })
      assert.isUndefined(downloadWebhookUrl(config.webhooks))
    })
  )

  it.effect("reads listen, one secret or a list of them (rotation), and public_url", () =>
    Effect.gen(function* () {
      const one = yield* load(
        configFile(`listen = "127.0.0.1:7661"\nsecret = "${OLD}"\npublic_url = "https://dlsync.example.com/"`)
      )
      assert.deepStrictEqual(one.webhooks.listen, { host: "127.0.0.1", port: 7661 })
      assert.deepStrictEqual(secrets(one), [OLD])
      assert.strictEqual(downloadWebhookUrl(one.webhooks), "https://dlsync.example.com/")
      assert.notInclude(JSON.stringify(one), OLD.slice(6))

      const two = yield* load(configFile(`listen = "127.0.0.1:7661"\nsecret = ["${OLD}", "${NEW}"]`))
      assert.deepStrictEqual(secrets(two), [OLD, NEW])
      assert.isUndefined(downloadWebhookUrl(two.webhooks))

      const fromEnv = yield* load(configFile(`listen = "127.0.0.1:7661"`), { DLSYNC_WEBHOOKS_SECRET: `${OLD},${NEW}` })
      assert.deepStrictEqual(secrets(fromEnv), [OLD, NEW])
      // `config show` names the keys, never the secrets.
      assert.deepStrictEqual(effectiveView(fromEnv).settings.webhooks, {
        listen: "127.0.0.1:7661",
        secret: ["<redacted>", "<redacted>"],
        public_url: null
      })
    })
  )

  it.effect("reads secret_file, one secret per line, and refuses it beside secret", () =>
    Effect.gen(function* () {
      const file = configFile(`listen = "127.0.0.1:7661"\nsecret_file = "webhook-secret"`)
      Fs.writeFileSync(Path.join(Path.dirname(file), "webhook-secret"), `${OLD}\n\n${NEW}\n`)
      assert.deepStrictEqual(secrets(yield* load(file)), [OLD, NEW])

      Fs.writeFileSync(Path.join(Path.dirname(file), "webhook-secret"), `${OLD}\nnot-a-secret\n`)
      const bad = problems(yield* Effect.flip(load(file)))
      assert.deepStrictEqual(bad, [
        `webhooks.secret_file: line 2 of ${Path.join(Path.dirname(file), "webhook-secret")} is not a webhook secret: "whsec_" followed by base64`
      ])

      const both = configFile(`listen = "127.0.0.1:7661"\nsecret = "${OLD}"\nsecret_file = "x"`)
      assert.deepStrictEqual(problems(yield* Effect.flip(load(both))), [
        "webhooks.secret_file: set webhooks.secret or webhooks.secret_file, not both"
      ])
    })
  )

  it.effect("refuses a malformed secret without showing it", () =>
    Effect.gen(function* () {
      for (const secret of ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_", "whsec_"]) {
        const error = yield* Effect.flip(load(configFile(`listen = "127.0.0.1:7661"\nsecret = "${secret}"`)))
        const text = problems(error).join("\n")
        assert.match(text, /^webhooks\.secret: .*\(the value is not shown\)/, text)
        assert.notInclude(text, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa")
      }
      const fromEnv = yield* Effect.flip(
        load(configFile(`listen = "127.0.0.1:7661"`), { DLSYNC_WEBHOOKS_SECRET: "whsec_MfKQ9r8GKYqrTwjU%" })
      )
      assert.notInclude(problems(fromEnv).join("\n"), "MfKQ9r8GKYqrTwjU")
    })
  )

  it.effect("a receiver needs a secret; public_url must be public https and needs the receiver", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(problems(yield* Effect.flip(load(configFile(`listen = "127.0.0.1:7661"`)))), [
        "webhooks.listen: needs webhooks.secret or webhooks.secret_file (the service's whsec_… signing secret) to verify deliveries"
      ])
      assert.deepStrictEqual(
        problems(yield* Effect.flip(load(configFile(`secret = "${OLD}"\npublic_url = "https://dlsync.example.com/"`)))),
        ['webhooks.public_url: needs webhooks.listen: the receiver it leads to (e.g. "127.0.0.1:7661")']
      )
      for (const [url, why] of [
        ["http://dlsync.example.com/", "must use https"],
        ["https://192.168.1.5:7661/", "must name a public host (the service delivers from the Internet)"],
        ["https://nas.local/", "must name a public host (the service delivers from the Internet)"],
        ["https://user:pw@dlsync.example.com/", "must not embed credentials"],
        ["dlsync.example.com", "must be an absolute https URL"]
      ] as const) {
        const error = yield* Effect.flip(
          load(configFile(`listen = "127.0.0.1:7661"\nsecret = "${OLD}"\npublic_url = "${url}"`))
        )
        assert.deepStrictEqual(problems(error), [`webhooks.public_url: ${why}, got ${JSON.stringify(url)}`], url)
      }
    })
  )
})
