/**
 * `[jellyfin]`, `[plex]`, `[[hooks]]` and `[[notify]]`: decoded with their defaults, and every
 * mistake refused at load (exit 78) with its `file:line`, secrets never shown.
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

const configFile = (text: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, BASE + text)
  return { dir, file }
}

const load = (file: string, env: Env = {}) =>
  loadConfig({ path: Option.some(file), env: { HOME: "/home/u", PATH: "/usr/bin:/bin", ...env }, cwd: "/" }).pipe(
    Effect.provide(NodeServices.layer)
  )

describe("after-landing configuration", () => {
  it.effect("decodes the media servers, hooks and notification targets, with their defaults", () =>
    Effect.gen(function* () {
      const { file } = configFile(
        [
          '[jellyfin]\nurl = "http://jellyfin:8096/"\napi_key = "jf-key"\npath_map = [["/srv/media", "/media"]]\n',
          '[plex]\nurl = "http://plex:32400"\ntoken = "plex-token"\n',
          '[[hooks]]\nevent = "file_complete"\ncommand = ["sh", "-c", "true"]\n',
          '[[hooks]]\nevent = "pass_complete"\ncommand = ["/bin/sh"]\ntimeout = "2m"\n',
          '[[notify]]\nurl = "ntfys://ntfy.sh/my-topic"\n',
          '[[notify]]\nurl = "https://example.com/hook"\nevents = ["file_complete"]\nlevel = "warn"\nsecret = "whsec_abc"\n'
        ].join("\n")
      )
      const config = yield* load(file)
      assert.strictEqual(config.jellyfin?.url, "http://jellyfin:8096")
      assert.strictEqual(Redacted.value(config.jellyfin!.token), "jf-key")
      assert.deepStrictEqual(config.jellyfin?.path_map, [["/srv/media", "/media"]])
      assert.deepStrictEqual(config.plex?.path_map, [])
      assert.deepStrictEqual(
        config.hooks.map((h) => [h.event, h.command, h.timeout]),
        [
          ["file_complete", ["sh", "-c", "true"], 30_000],
          ["pass_complete", ["/bin/sh"], 120_000]
        ]
      )
      assert.deepStrictEqual(config.notify[0]?.events, ["file_failed", "release_failed", "deletion_held"])
      assert.strictEqual(config.notify[0]?.level, "info")
      assert.isNull(config.notify[0]?.secret)
      assert.deepStrictEqual(config.notify[1]?.events, ["file_complete"])
      assert.strictEqual(Redacted.value(config.notify[1]!.secret!), "whsec_abc")

      // `config check` shows them, without a secret.
      const view = effectiveView(config).settings
      const shown = JSON.stringify(view)
      for (const secret of ["jf-key", "plex-token", "my-topic", "whsec_abc"]) assert.notInclude(shown, secret)
      assert.deepStrictEqual(view.notify?.[0], {
        url: "<redacted: ntfy (ntfy.sh)>",
        events: ["file_failed", "release_failed", "deletion_held"],
        level: "info",
        secret: null
      })
      assert.strictEqual(view.hooks?.[1]?.timeout, "2m")
    })
  )

  it.effect("none of them: nothing configured", () =>
    Effect.gen(function* () {
      const config = yield* load(configFile("").file)
      assert.isNull(config.jellyfin)
      assert.isNull(config.plex)
      assert.deepStrictEqual(config.hooks, [])
      assert.deepStrictEqual(config.notify, [])
    })
  )

  it.effect("an unknown event, an empty command and a program not found, each at its line", () =>
    Effect.gen(function* () {
      const { file } = configFile(
        [
          '[[hooks]]\nevent = "file_completed"\ncommand = ["true"]\n',
          '[[hooks]]\nevent = "file_failed"\ncommand = []\n',
          '[[hooks]]\nevent = "file_failed"\ncommand = ["no-such-program-here", "x"]\n',
          '[[hooks]]\nevent = "file_failed"\ncommand = ["./missing.sh"]\n'
        ].join("\n")
      )
      const error = yield* Effect.flip(load(file))
      const lines = error.message.split("\n")
      assert.strictEqual(lines.length, 2, error.message)
      assert.match(
        lines[0]!,
        new RegExp(`^${file}:9: hooks\\.0\\.event: Expected "file_complete" \\| .*got "file_completed"`)
      )
      assert.match(
        lines[1]!,
        new RegExp(`^${file}:14: hooks\\.1\\.command: Expected a value with a length of at least 1`)
      )
      // The schema passed: the programs are checked next, each at its line.
      const programs = yield* Effect.flip(
        load(
          configFile(
            '[[hooks]]\nevent = "file_failed"\ncommand = ["no-such-program-here", "x"]\n\n[[hooks]]\nevent = "file_failed"\ncommand = ["./missing.sh"]\n'
          ).file
        )
      )
      const [onPath, relative] = programs.message.split("\n")
      assert.match(onPath!, /:10: hooks\.0\.command: no-such-program-here is not an executable file on PATH/)
      assert.match(
        relative!,
        /:14: hooks\.1\.command: \/.*\/missing\.sh is not an executable file; give its absolute path/
      )
    })
  )

  it.effect("a notification URL of another scheme is refused without showing it", () =>
    Effect.gen(function* () {
      const { file } = configFile('[[notify]]\nurl = "ftp://secret-token@host/x"\n')
      const error = yield* Effect.flip(load(file))
      assert.include(error.message, `${file}:9: notify.0.url:`)
      assert.include(error.message, "(the value is not shown)")
      assert.notInclude(error.message, "secret-token")
    })
  )

  it.effect("a media server's path map from the environment, as JSON", () =>
    Effect.gen(function* () {
      const config = yield* load(configFile('[jellyfin]\nurl = "http://jf:8096"\napi_key = "k"\n').file, {
        DLSYNC_JELLYFIN_PATH_MAP: '[["/srv/media", "/data"]]'
      })
      assert.deepStrictEqual(config.jellyfin?.path_map, [["/srv/media", "/data"]])
    })
  )
})
