import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted } from "effect"
import { doctorAtStartLayer } from "../../src/arr/doctorAtStart.ts"
import { SABNZBD_OFF } from "../../src/config/sabnzbdSettings.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { arrStandIn } from "../standins/arrStandIn.ts"
import { standIn } from "../standins/recordingServer.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"

const KEY = "radarr-key"

/** The qBittorrent surface on, its paths unmapped. */
const QBITTORRENT = {
  listen: { host: "127.0.0.1", port: 8080 },
  username: "arr",
  password: Redacted.make("pw"),
  path_map: []
}

/** The configuration the doctor reads: Radarr at `url`, the mirror at `root`. */
const settings = (
  url: string,
  root: string,
  categories: ReadonlyArray<string> = [],
  qbittorrent: typeof QBITTORRENT | null = null
) => ({
  sonarr: null,
  radarr: { url, api_key: Redacted.make(KEY), path_map: [] },
  lidarr: null,
  readarr: null,
  mirror: { root },
  qbittorrent,
  sabnzbd: { ...SABNZBD_OFF, categories }
})

/** Builds the layer (as the daemon does), then waits until `lines` log lines came, in real time. */
const startAndCollect = (layer: Layer.Layer<never>, lines: number) =>
  Effect.gen(function* () {
    const logs: Array<string> = []
    const logger = Logger.layer([Logger.make((o) => logs.push(`${o.logLevel}: ${String(o.message)}`))])
    yield* Effect.scoped(
      Effect.gen(function* () {
        yield* Layer.build(Layer.fresh(layer))
        for (let i = 0; logs.length < lines && i < 1_000; i++)
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      })
    ).pipe(Effect.provide(logger))
    return logs
  })

const ALSO = " (and qbittorrent.path_map the same: Radarr is told its paths from there)"

describe("path doctor at daemon start", () => {
  it.live(
    "warns with the fix (for the qBittorrent surface too) for each category Radarr does not see, the intake's too",
    () =>
      Effect.gen(function* () {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-doctor-"))
        const root = Path.join(dir, "root")
        Fs.mkdirSync(root)
        const radarr = yield* standIn(
          arrStandIn({
            apiKey: KEY,
            appName: "Radarr",
            mount: { hostDir: root, appPath: "/movies-root" },
            downloadClients: [{ movieCategory: "movies" }]
          })
        )
        const intake = makeMemoryIntake(root, ["4k"])
        const layer = doctorAtStartLayer(settings(radarr.url, root, [], QBITTORRENT)).pipe(
          Layer.provide(Layer.succeed(Intake, intake.intake))
        )
        const logs = yield* startAndCollect(layer, 2)
        assert.deepStrictEqual(
          logs.map((l) => l.replace(/\.dlsync-probe-[0-9a-f]+/g, ".dlsync-probe-X")),
          [
            `Warn: path doctor: Radarr [4k]: Radarr does not see ${root}/4k/.dlsync-probe-X as ${root}/4k/.dlsync-probe-X; it sees it as /movies-root/4k/.dlsync-probe-X: set radarr.path_map = [["${root}", "/movies-root"]]${ALSO}`,
            `Warn: path doctor: Radarr [movies]: Radarr does not see ${root}/movies/.dlsync-probe-X as ${root}/movies/.dlsync-probe-X; it sees it as /movies-root/movies/.dlsync-probe-X: set radarr.path_map = [["${root}", "/movies-root"]]${ALSO}`
          ]
        )
        Fs.rmSync(dir, { recursive: true, force: true })
      })
  )

  it.live("an app that cannot be reached is one warning line", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-doctor-"))
      const logs = yield* startAndCollect(doctorAtStartLayer(settings("http://127.0.0.1:1", dir, ["movies"])), 1)
      assert.deepStrictEqual(logs, [
        "Warn: path doctor: cannot reach Radarr at http://127.0.0.1:1: connection refused; is it running, and is radarr.url right?"
      ])
      Fs.rmSync(dir, { recursive: true, force: true })
    })
  )
})
