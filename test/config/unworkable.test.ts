/**
 * Settings that decode but cannot work are refused at load (exit 78 in every command,
 * `config check` included), each naming its key and line; a secret's value never appears
 * in an error, whatever its type; with no configuration at all, the error says where
 * dlsync looked.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const tmp = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))

const write = (dir: string, text: string, name = "config.toml") => {
  const file = Path.join(dir, name)
  Fs.writeFileSync(file, text)
  return file
}

const load = (file: string | undefined, env: Env = {}) =>
  loadConfig({ path: Option.fromNullishOr(file), env: { HOME: "/home/u", ...env }, cwd: "/work" }).pipe(
    Effect.provide(NodeServices.layer)
  )

/** The error lines of loading `extra` added to a valid configuration. */
const errorsOf = (extra: { readonly service?: string; readonly mirror?: string; readonly rest?: string }) =>
  Effect.gen(function* () {
    const dir = tmp()
    const file = write(
      dir,
      `[service]\nbase_url = "https://example.test/api/v1"\n${extra.service ?? 'api_key = "k"\n'}\n[mirror]\nroot = "media"\n${extra.mirror ?? ""}\n${extra.rest ?? ""}`
    )
    const error = yield* Effect.flip(load(file))
    return { file, dir, lines: error.message.split("\n") }
  })

describe("settings that cannot work", () => {
  it.effect("a poll or listing interval that would flood the service", () =>
    Effect.gen(function* () {
      const { file, lines } = yield* errorsOf({ rest: '[sync]\npoll_interval = "0s"\nlisting_interval = "1ms"\n' })
      assert.deepStrictEqual(lines, [
        `${file}:9: sync.poll_interval: 0s is too short: at least 1s (every poll is a request)`,
        `${file}:10: sync.listing_interval: 1ms is too short: at least 1m (a full listing reads the whole account)`
      ])
    })
  )

  it.effect("a selected folder that climbs out of the account", () =>
    Effect.gen(function* () {
      const { lines } = yield* errorsOf({ mirror: 'folders = ["../etc", "Movies/../TV", "TV/Shows"]\n' })
      assert.strictEqual(lines.length, 2)
      assert.include(lines[0], 'mirror.folders: "../etc": write a folder below the account root without "." or ".."')
      assert.include(lines[1], '"Movies/../TV"')
    })
  )

  it.effect("a malformed include or exclude pattern", () =>
    Effect.gen(function* () {
      const { lines } = yield* errorsOf({ mirror: 'include = ["[unclosed", "*.mkv"]\nexclude = ["{a,b"]\n' })
      assert.strictEqual(lines.length, 2)
      assert.include(lines[0], 'mirror.include: "[unclosed": "[" without a closing "]"')
      assert.include(lines[1], 'mirror.exclude: "{a,b": "{" without a closing "}"')
    })
  )

  it.effect("accepts well-formed patterns and folders", () =>
    Effect.gen(function* () {
      const dir = tmp()
      const file = write(
        dir,
        `[service]\nbase_url = "https://example.test/api/v1"\n[mirror]\nroot = "media"\nfolders = ["/Movies/", "TV/Shows"]\ninclude = ["*.{mkv,mp4}", "[!.]*", "a\\\\[b"]\n`
      )
      const config = yield* load(file)
      assert.deepStrictEqual(config.mirror.folders, ["/Movies/", "TV/Shows"])
    })
  )

  it.effect("a state directory equal to or inside the mirror root", () =>
    Effect.gen(function* () {
      const inside = yield* errorsOf({ mirror: 'state_dir = "media/.state"\n' })
      assert.strictEqual(inside.lines.length, 1)
      assert.include(
        inside.lines[0],
        `mirror.state_dir: ${Path.join(inside.dir, "media/.state")} is inside the mirror root ${Path.join(inside.dir, "media")}`
      )
      const same = yield* errorsOf({ mirror: 'state_dir = "media"\n' })
      assert.include(same.lines[0], "is the mirror root; put the state outside it")
      const dotted = yield* errorsOf({ mirror: 'state_dir = "media/..state"\n' })
      assert.include(dotted.lines[0], "is inside the mirror root", "a name starting with two dots is inside")
    })
  )

  it.effect("an api_key_file of more than one line", () =>
    Effect.gen(function* () {
      const dir = tmp()
      write(dir, "dls_first\ndls_second\n", "key")
      const { lines } = yield* errorsOf({ service: `api_key_file = "${Path.join(dir, "key")}"\n` })
      assert.strictEqual(lines.length, 1)
      assert.include(lines[0], "service.api_key_file: ")
      assert.include(lines[0], "holds more than one line; it must hold the secret alone")
      assert.notInclude(lines[0], "dls_first")
    })
  )
})

describe("secrets in configuration errors", () => {
  for (const [what, value] of [
    ["a list", '["dls_secret_value"]'],
    ["a table", '{ key = "dls_secret_value" }'],
    ["a number", "123456789"],
    ["an empty text", '""']
  ] as const) {
    it.effect(`never echoes service.api_key given as ${what}`, () =>
      Effect.gen(function* () {
        const { file, lines } = yield* errorsOf({ service: `api_key = ${value}\n` })
        assert.strictEqual(lines.length, 1, lines.join("\n"))
        assert.match(lines[0]!, new RegExp(`^${file}:3: service\\.api_key: .*\\(the value is not shown\\)$`))
        assert.notInclude(lines[0], "dls_secret_value")
        assert.notInclude(lines[0], "123456789")
      })
    )
  }
})

describe("no configuration at all", () => {
  it.effect("says no file was found and which paths were searched", () =>
    Effect.gen(function* () {
      const home = tmp()
      const error = yield* Effect.flip(load(undefined, { HOME: home }))
      assert.deepStrictEqual(error.message.split("\n"), [
        `no configuration file found (looked for --config FILE, $DLSYNC_CONFIG, ${home}/.config/dlsync/config.toml, /etc/dlsync/config.toml); write one from config.example.toml there, or pass --config FILE`
      ])
    })
  )

  it.effect("with some DLSYNC_ variables set, names the missing keys", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(load(undefined, { HOME: tmp(), DLSYNC_MIRROR_ROOT: "/m" }))
      assert.include(error.message, "service: required key is missing")
    })
  )
})

describe("paths", () => {
  it.effect('"~/" is the home directory, as in a shell', () =>
    Effect.gen(function* () {
      const dir = tmp()
      const file = write(
        dir,
        `[service]\nbase_url = "https://example.test/api/v1"\n[mirror]\nroot = "~/mirror"\nstate_dir = "~"\n`
      )
      const config = yield* load(file, { HOME: "/home/someone" })
      assert.strictEqual(config.mirror.root, "/home/someone/mirror")
      assert.strictEqual(config.mirror.state_dir, "/home/someone")
    })
  )
})
