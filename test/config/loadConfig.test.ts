import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import type { ConfigError } from "../../src/config/ConfigError.ts"
import { findLine } from "../../src/config/configSources.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"
import { transferOptions } from "../../src/transfer/TransferOptions.ts"

const tmp = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))

const write = (dir: string, text: string) => {
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, text)
  return file
}

const load = (file: string | undefined, env: Env = {}) =>
  loadConfig({ path: Option.fromNullishOr(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )

const problems = (e: ConfigError) =>
  e.problems.map((p) => [p.source, p.key, p.message].filter((part) => part !== "").join(": "))

const VALID = `
[service]
base_url = "https://example.test/api/v1/"
api_key = "sk_live_abc"

[mirror]
root = "media"
`

describe("loadConfig", () => {
  it.effect("decodes a valid file, applies defaults and resolves paths against the file's folder", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const config = yield* load(write(dir, VALID))
      assert.strictEqual(config.service.base_url, "https://example.test/api/v1")
      assert.strictEqual(config.service.auth_url, "https://example.test")
      assert.strictEqual(Redacted.value(Option.getOrThrow(config.service.api_key)), "sk_live_abc")
      assert.strictEqual(config.mirror.root, Path.join(dir, "media"))
      assert.strictEqual(config.mirror.state_dir, "/home/u/.local/state/dlsync")
      assert.include(config.service.scopes, "files:read")
    })
  )

  it.effect("never shows a secret when printed", () =>
    Effect.gen(function* () {
      const config = yield* load(write(tmp(), VALID))
      assert.notInclude(JSON.stringify(config), "sk_live_abc")
      assert.notInclude(String(config.service.api_key), "sk_live_abc")
    })
  )

  it.effect("lets DLSYNC_<SECTION>_<KEY> override the file, relative to the working directory", () =>
    Effect.gen(function* () {
      const config = yield* load(write(tmp(), VALID), {
        DLSYNC_MIRROR_ROOT: "elsewhere",
        DLSYNC_SERVICE_SCOPES: "files:read, storage:read",
        DLSYNC_MIRROR_STATE_DIR: "/var/lib/dlsync"
      })
      assert.strictEqual(config.mirror.root, "/work/elsewhere")
      assert.deepStrictEqual(config.service.scopes, ["files:read", "storage:read"])
      assert.strictEqual(config.mirror.state_dir, "/var/lib/dlsync")
    })
  )

  it.effect("works from the environment alone when no file exists", () =>
    Effect.gen(function* () {
      const config = yield* load(undefined, {
        XDG_CONFIG_HOME: tmp(),
        DLSYNC_SERVICE_BASE_URL: "http://127.0.0.1:1/api/v1",
        DLSYNC_MIRROR_ROOT: "/data",
        STATE_DIRECTORY: "/var/lib/dlsync"
      })
      assert.isUndefined(config.file)
      assert.strictEqual(config.mirror.state_dir, "/var/lib/dlsync")
    })
  )

  it.effect("finds $DLSYNC_CONFIG, then $XDG_CONFIG_HOME/dlsync/config.toml", () =>
    Effect.gen(function* () {
      const xdg = tmp()
      Fs.mkdirSync(Path.join(xdg, "dlsync"))
      const xdgFile = write(Path.join(xdg, "dlsync"), VALID)
      assert.strictEqual((yield* load(undefined, { XDG_CONFIG_HOME: xdg })).file, xdgFile)
      const explicit = write(tmp(), VALID)
      assert.strictEqual((yield* load(undefined, { XDG_CONFIG_HOME: xdg, DLSYNC_CONFIG: explicit })).file, explicit)
    })
  )

  it.effect("names every bad key with its file and line", () =>
    Effect.gen(function* () {
      const file = write(
        tmp(),
        `[service]\nbase_url = "ftp://nope"\napi_kye = "x"\n\n[mirror]\nroot = 5\n\n[extra]\nx = 1\n`
      )
      const error = yield* Effect.flip(load(file))
      assert.deepStrictEqual(problems(error), [
        `${file}:2: service.base_url: Expected an http:// or https:// URL, got "ftp://nope"`,
        `${file}:3: service.api_kye: unknown key; did you mean api_key?`,
        `${file}:6: mirror.root: Expected string, got 5`,
        `${file}:8: extra: unknown key`
      ])
    })
  )

  it.effect("names a missing required key", () =>
    Effect.gen(function* () {
      const file = write(tmp(), `[service]\nbase_url = "https://x.test/api/v1"\n`)
      const error = yield* Effect.flip(load(file))
      assert.deepStrictEqual(problems(error), [`${file}: mirror: required key is missing`])
    })
  )

  it.effect("points at the line of a TOML syntax error", () =>
    Effect.gen(function* () {
      const file = write(tmp(), `[service]\nbase_url = "https://x.test/api/v1\n`)
      const error = yield* Effect.flip(load(file))
      assert.match(problems(error)[0]!, new RegExp(`^${file}:2: (?!config)\\w`))
    })
  )

  it.effect("names the variable for a bad or unknown environment value", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        load(write(tmp(), VALID), { DLSYNC_SERVICE_CLIENT_ID: "not-a-uuid", DLSYNC_MIRROR_ROOTT: "/x" })
      )
      assert.sameMembers(problems(error), [
        "environment: DLSYNC_MIRROR_ROOTT: not a dlsync setting; did you mean DLSYNC_MIRROR_ROOT? (see config.example.toml)"
      ])
      const error2 = yield* Effect.flip(load(write(tmp(), VALID), { DLSYNC_SERVICE_CLIENT_ID: "not-a-uuid" }))
      assert.deepStrictEqual(problems(error2), [
        'DLSYNC_SERVICE_CLIENT_ID: service.client_id: Expected a UUID, got "not-a-uuid"'
      ])
    })
  )

  it.effect("reads the API key from api_key_file (Docker secrets) and refuses both at once", () =>
    Effect.gen(function* () {
      const dir = tmp()
      Fs.writeFileSync(Path.join(dir, "key"), "sk_from_file\n")
      const file = write(
        dir,
        `[service]\nbase_url = "https://x.test/api/v1"\napi_key_file = "key"\n[mirror]\nroot = "/m"\n`
      )
      const config = yield* load(file)
      assert.strictEqual(Redacted.value(Option.getOrThrow(config.service.api_key)), "sk_from_file")
      const both = yield* Effect.flip(load(file, { DLSYNC_SERVICE_API_KEY: "sk_env" }))
      assert.match(problems(both)[0]!, /service.api_key_file: set service.api_key or service.api_key_file, not both/)
    })
  )

  it.effect("refuses a --config path that does not exist", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(load("/nonexistent/dlsync.toml"))
      assert.deepStrictEqual(problems(error), ["--config: /nonexistent/dlsync.toml does not exist"])
    })
  )

  it.effect("suggests the key a mistyped one stands for, in a section, an entry or the top level", () =>
    Effect.gen(function* () {
      const file = write(
        tmp(),
        `${VALID}\n[sync]\npol_interval = "30s"\n\n[[hooks]]\nevent = "file_complete"\ncommand = ["/bin/true"]\ntimout = "1m"\n\n[categories.tv]\nselction = "all"\n\n[transfer]\nsegments = 2\n\n[colour]\nx = 1\n`
      )
      assert.deepStrictEqual(problems(yield* Effect.flip(load(file))), [
        `${file}:10: sync.pol_interval: unknown key; did you mean poll_interval?`,
        `${file}:15: hooks.0.timout: unknown key; did you mean timeout?`,
        `${file}:18: categories.tv.selction: unknown key; did you mean selection?`,
        `${file}:20: transfer: unknown key; did you mean transfers?`,
        `${file}:23: colour: unknown key`
      ])
    })
  )

  it.effect("says how to write a number or a boolean given as text", () =>
    Effect.gen(function* () {
      const file = write(tmp(), `${VALID}portable_names = "true"\n\n[transfers]\nconcurrency = "3"\n`)
      assert.deepStrictEqual(problems(yield* Effect.flip(load(file))), [
        `${file}:8: mirror.portable_names: Expected boolean, got "true" (write true without quotes)`,
        `${file}:11: transfers.concurrency: Expected number, got "3" (write 3 without quotes)`
      ])
    })
  )

  it.effect("a secret file that cannot be read: its path and why, in words", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const file = write(dir, `${VALID}\n[qbittorrent]\nusername = "arr"\npassword_file = "missing"\n`)
      assert.deepStrictEqual(problems(yield* Effect.flip(load(file))), [
        `${file}:11: qbittorrent.password_file: cannot read ${Path.join(dir, "missing")}: no such file`
      ])
    })
  )
})

describe("findLine", () => {
  it("finds a key inside its section only", () => {
    const text = `root = 1\n[service]\nroot = 2\n[mirror]\n  root = 3\n`
    assert.strictEqual(findLine(text, "mirror.root"), 5)
    assert.strictEqual(findLine(text, "service.root"), 3)
    assert.strictEqual(findLine(text, "mirror"), 4)
    assert.isUndefined(findLine(text, "mirror.state_dir"))
  })
})

describe("[transfers]", () => {
  const settingsOf = (o: ReturnType<typeof transferOptions>) => ({
    concurrency: o.concurrency,
    segments: o.segments,
    max_connections: o.max_connections,
    segment_threshold: o.segment_threshold,
    bandwidth_limit: o.bandwidth_limit,
    bandwidth_schedule: o.bandwidth_schedule,
    min_free_space: o.min_free_space
  })

  it.effect("reaches the transfer engine with the documented defaults for the keys not set", () =>
    Effect.gen(function* () {
      const none = yield* load(write(tmp(), VALID))
      assert.deepStrictEqual(settingsOf(transferOptions(none.transfers)), {
        concurrency: 3,
        segments: 4,
        max_connections: 16,
        segment_threshold: 64 * 1024 * 1024,
        bandwidth_limit: 0,
        bandwidth_schedule: [],
        min_free_space: 1024 * 1024 * 1024
      })
      assert.deepStrictEqual(settingsOf(transferOptions()), settingsOf(transferOptions(none.transfers)))
      const some = yield* load(write(tmp(), `${VALID}\n[transfers]\nsegments = 2\nmin_free_space = "1 GiB"\n`), {
        DLSYNC_TRANSFERS_BANDWIDTH_LIMIT: "5 MiB/s",
        DLSYNC_TRANSFERS_MAX_CONNECTIONS: "6"
      })
      const options = transferOptions(some.transfers)
      assert.strictEqual(options.segments, 2)
      assert.strictEqual(options.max_connections, 6)
      assert.strictEqual(options.bandwidth_limit, 5 * 1024 * 1024)
      assert.strictEqual(options.concurrency, 3)
      assert.strictEqual(options.segment_threshold, 64 * 1024 * 1024)
    })
  )
})

describe("transfers.max_connections", () => {
  it.effect("refuses 0 and more than 256, naming the key and its line", () =>
    Effect.gen(function* () {
      for (const value of [0, 257]) {
        const file = write(tmp(), `${VALID}\n[transfers]\nmax_connections = ${value}\n`)
        const error = yield* Effect.flip(load(file))
        assert.strictEqual(problems(error).length, 1)
        assert.match(problems(error)[0]!, new RegExp(`^${file}:\\d+: transfers.max_connections: `))
      }
    })
  )
})

describe("transfers.bandwidth_schedule", () => {
  it.effect("reads windows from the file and from the environment, and refuses overlaps naming both", () =>
    Effect.gen(function* () {
      const file = write(
        tmp(),
        `${VALID}\n[transfers]\nbandwidth_schedule = ["01:00-07:00 unlimited", "18:00-23:00 5 MiB/s"]\n`
      )
      const config = yield* load(file)
      assert.deepStrictEqual(config.transfers.bandwidth_schedule, [
        { start: 60, end: 420, limit: 0 },
        { start: 1080, end: 1380, limit: 5 * 1024 * 1024 }
      ])
      const fromEnv = yield* load(file, { DLSYNC_TRANSFERS_BANDWIDTH_SCHEDULE: "22:00-06:00 1 MiB/s" })
      assert.deepStrictEqual(fromEnv.transfers.bandwidth_schedule, [{ start: 1320, end: 360, limit: 1024 * 1024 }])
      const error = yield* Effect.flip(
        load(file, { DLSYNC_TRANSFERS_BANDWIDTH_SCHEDULE: "01:00-07:00 unlimited; 06:00-08:00 1 MiB/s" })
      )
      assert.match(problems(error)[0]!, /^DLSYNC_TRANSFERS_BANDWIDTH_SCHEDULE: transfers.bandwidth_schedule: .*overlap/)
    })
  )
})
