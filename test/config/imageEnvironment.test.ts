/**
 * The configuration as the Docker image loads it: the environment is the Dockerfile's own
 * `ENV` (read from the Dockerfile, so this follows the image), the file is the user's
 * config.toml. The image sets nothing the user is told to set, an override of the file by
 * the environment is said, and the default ports are none of the stack's dlsync runs in.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { NodeServices } from "@effect/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { EMULATOR_DEFAULT_PORT } from "../../src/cli/emulator.ts"
import { configNotices } from "../../src/config/configNotices.ts"
import { DEFAULT_PORTS } from "../../src/config/fields.ts"
import { type Env, loadConfig } from "../../src/config/loadConfig.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const dockerfile = Fs.readFileSync(Path.join(repo, "Dockerfile"), "utf8")

/** The final stage's `ENV` instructions, as variables (`ENV A=1 \ B=2`). */
const imageEnv: Env = Object.fromEntries(
  (dockerfile.split(/^FROM /m).at(-1) ?? "")
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => line.startsWith("ENV "))
    .flatMap((line) => line.slice(4).trim().split(/\s+/))
    .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])
)

/** The ports of the programs dlsync runs beside, which its defaults must leave free. */
const STACK_PORTS: Readonly<Record<string, ReadonlyArray<number>>> = {
  Sonarr: [8989],
  Radarr: [7878],
  Lidarr: [8686],
  Readarr: [8787],
  Prowlarr: [9696],
  Bazarr: [6767],
  "Overseerr/Jellyseerr": [5055],
  Jellyfin: [8096, 8920],
  Plex: [32400],
  qBittorrent: [8080],
  SABnzbd: [8080, 9090]
}

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/** `config.toml` in a fresh folder that stands for the `/config` volume. */
const configFile = (text: string): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-image-"))
  dirs.push(dir)
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, text)
  return file
}

/** Loads as the container does: the image's environment, what compose adds, /config/config.toml. */
const loadInImage = (file: string, compose: Env = {}) =>
  loadConfig({
    path: Option.none(),
    env: { ...imageEnv, HOME: "/config", ...compose, DLSYNC_CONFIG: file },
    cwd: "/opt/dlsync"
  }).pipe(Effect.provide(NodeServices.layer))

const USER_CONFIG = `[service]
base_url = "https://api.example.com/api/v1"
api_key = "k"

[mirror]
root = "/data/dlsync"
`

describe("the Docker image's environment", () => {
  it("sets where the file is and where the state goes, never a key of the file", () => {
    assert.strictEqual(imageEnv.DLSYNC_CONFIG, "/config/config.toml")
    assert.strictEqual(imageEnv.STATE_DIRECTORY, "/config/state")
    const settings = Object.keys(imageEnv).filter((name) => name.startsWith("DLSYNC_") && name !== "DLSYNC_CONFIG")
    assert.deepStrictEqual(settings, [], "a DLSYNC_<SECTION>_<KEY> of the image would replace the user's value")
  })

  it.effect("mirrors into the root config.toml names, the state in the /config volume, nothing said", () =>
    Effect.gen(function* () {
      const config = yield* loadInImage(configFile(USER_CONFIG))
      assert.strictEqual(config.mirror.root, "/data/dlsync")
      assert.strictEqual(config.mirror.state_dir, "/config/state")
      assert.deepStrictEqual(config.overrides, [])
      assert.deepStrictEqual(configNotices(config), [])
    })
  )

  it.effect("a variable of compose that replaces a key of config.toml: said in one line, naming both", () =>
    Effect.gen(function* () {
      const file = configFile(USER_CONFIG)
      const config = yield* loadInImage(file, { DLSYNC_MIRROR_ROOT: "/data" })
      assert.strictEqual(config.mirror.root, "/data", "the environment wins, as documented")
      assert.deepStrictEqual(configNotices(config), [
        `the environment overrides the configuration file: DLSYNC_MIRROR_ROOT replaces mirror.root of ${file}:6 (unset the variable, or remove the key from the file)`
      ])
    })
  )

  it.effect("listens by default on ports no *arr app, media server or download client uses", () =>
    Effect.gen(function* () {
      const config = yield* loadInImage(configFile(USER_CONFIG))
      const taken = new Map(Object.entries(STACK_PORTS).flatMap(([app, ports]) => ports.map((p) => [p, app])))
      assert.deepStrictEqual(config.server.listen, { host: "127.0.0.1", port: DEFAULT_PORTS.server })
      const defaults = {
        ...Object.fromEntries(Object.entries(DEFAULT_PORTS).map(([name, port]) => [`${name} default`, port])),
        "emulator --port": EMULATOR_DEFAULT_PORT,
        "emulator CDN": EMULATOR_DEFAULT_PORT + 1
      }
      for (const [what, port] of Object.entries(defaults)) {
        assert.isFalse(taken.has(port), `${what} ${port} is ${taken.get(port)}'s`)
      }
      assert.strictEqual(new Set(Object.values(defaults)).size, Object.keys(defaults).length, "one port each")
      // The image publishes and checks the port dlsync listens on.
      assert.include(dockerfile, `EXPOSE ${DEFAULT_PORTS.server}\n`)
      const healthcheck = Fs.readFileSync(Path.join(repo, "docker/healthcheck.mjs"), "utf8")
      assert.include(healthcheck, `const DEFAULT_LISTEN = "127.0.0.1:${DEFAULT_PORTS.server}"`)
    })
  )
})
