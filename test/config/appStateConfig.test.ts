/** `[app_state]`: its keys, defaults, environment overrides, limits and `config check` view. */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { ConfigError } from "../../src/config/ConfigError.ts"
import { effectiveView } from "../../src/config/effectiveView.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const write = (text: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, text)
  return file
}

const load = (file: string, env: Env = {}) =>
  loadConfig({ path: Option.some(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )

const problems = (e: ConfigError) => e.problems.map((p) => `${p.source}: ${p.key}: ${p.message}`)

const BASE = `[service]\nbase_url = "https://x.test/api/v1"\n[mirror]\nroot = "/m"\n`

describe("[app_state]", () => {
  it.effect("defaults: the host name, 30 s, 300 requests a minute, 30 s after a --once pass", () =>
    Effect.gen(function* () {
      const config = yield* load(write(BASE))
      assert.deepStrictEqual(config.app_state, {
        device_name: Os.hostname(),
        progress_interval: 30_000,
        max_requests_per_minute: 300,
        once_wait: 30_000
      })
      assert.deepStrictEqual(effectiveView(config).settings.app_state, {
        device_name: Os.hostname(),
        progress_interval: "30s",
        max_requests_per_minute: 300,
        once_wait: "30s"
      })
    })
  )

  it.effect("reads every key from the file, and DLSYNC_APP_STATE_<KEY> overrides each", () =>
    Effect.gen(function* () {
      const file = write(
        `${BASE}[app_state]\ndevice_name = "nas"\nprogress_interval = "1m"\nmax_requests_per_minute = 120\nonce_wait = "2m"\n`
      )
      const fromFile = yield* load(file)
      assert.deepStrictEqual(fromFile.app_state, {
        device_name: "nas",
        progress_interval: 60_000,
        max_requests_per_minute: 120,
        once_wait: 120_000
      })
      const fromEnv = yield* load(file, {
        DLSYNC_APP_STATE_DEVICE_NAME: "attic",
        DLSYNC_APP_STATE_PROGRESS_INTERVAL: "5s",
        DLSYNC_APP_STATE_MAX_REQUESTS_PER_MINUTE: "60",
        DLSYNC_APP_STATE_ONCE_WAIT: "3s"
      })
      assert.deepStrictEqual(fromEnv.app_state, {
        device_name: "attic",
        progress_interval: 5_000,
        max_requests_per_minute: 60,
        once_wait: 3_000
      })
    })
  )

  it.effect("refuses a rate outside 1..1200 and a malformed duration, naming the key", () =>
    Effect.gen(function* () {
      const file = write(BASE)
      const tooMany = yield* Effect.flip(load(file, { DLSYNC_APP_STATE_MAX_REQUESTS_PER_MINUTE: "1201" }))
      assert.match(
        problems(tooMany)[0]!,
        /^DLSYNC_APP_STATE_MAX_REQUESTS_PER_MINUTE: app_state.max_requests_per_minute: /
      )
      const zero = yield* Effect.flip(load(file, { DLSYNC_APP_STATE_MAX_REQUESTS_PER_MINUTE: "0" }))
      assert.match(problems(zero)[0]!, /app_state.max_requests_per_minute/)
      const bad = yield* Effect.flip(load(write(`${BASE}[app_state]\nprogress_interval = "soon"\n`)))
      assert.match(problems(bad)[0]!, /:6: app_state.progress_interval: /)
    })
  )
})
