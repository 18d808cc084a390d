/**
 * The demo's last step: a release sent the way Sonarr sends it, through dlsync's
 * qBittorrent-compatible API (plain HTTP, as any app), followed on the service, mirrored
 * into `<mirror>/TV/` (the library's own TV folder: one case) and reported complete once
 * every file is on disk.
 *
 *   login ─► torrents/add (magnet, category TV) ─► loop: intake round · mirror pass ·
 *   torrents/info (a line per state) ─► stoppedUP, progress 1, content_path
 */
import { Clock, Console, Duration, Effect, Layer, Redacted } from "effect"
import type { AppConfig } from "../config/loadConfig.ts"
import type { RunningEmulator } from "../emulator/server.ts"
import { intakeLayer } from "../intake/IntakeLive.ts"
import { IntakeRunner } from "../intake/IntakeRunner.ts"
import { QbittorrentServer } from "../qbittorrent/QbittorrentServer.ts"

const USERNAME = "demo"
/** The sample library's TV folder, so that the shows are under one name. */
const CATEGORY = "TV"
const PASSWORD = "demo"
/** The release: the emulator makes a magnet's video file `xl` bytes (and a sample a tenth of it). */
const RELEASE = "Demo.Show.S01E01.1080p"
const MAGNET = `magnet:?xt=urn:btih:d1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4&dn=${RELEASE}&xl=8000000`
/** The longest the step waits for the release to complete. */
const STEP_DEADLINE_MS = 60_000

/** The qBittorrent API on an ephemeral loopback port, over the intake queue (needs the engine's store). */
export const demoQbittorrentLayer = (config: AppConfig) =>
  QbittorrentServer.layer({
    settings: {
      listen: { host: "127.0.0.1", port: 0 },
      username: USERNAME,
      password: Redacted.make(PASSWORD),
      path_map: []
    },
    mirrorRoot: config.mirror.root
  }).pipe(Layer.provide(intakeLayer(config)))

interface TorrentInfo {
  readonly name: string
  readonly state: string
  readonly progress: number
  readonly content_path: string
}

/**
 * The step itself; `mirror` is one mirror pass with its download lines. Fails with a line
 * when the API answers otherwise than qBittorrent would.
 */
export const arrStep = Effect.fnUntraced(function* <E, R>(emu: RunningEmulator, mirror: Effect.Effect<void, E, R>) {
  const { url } = yield* QbittorrentServer
  const runner = yield* IntakeRunner
  // The service completes it at once, as it does a cached torrent.
  yield* request(`${emu.controlUrl}/downloads/timings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ processing_ms: 0, downloading_ms: 0, finalizing_ms: 0 })
  })
  yield* Console.log(`  qBittorrent API: ${url}  (user ${USERNAME}, password ${PASSWORD})`)
  const login = yield* request(`${url}/api/v2/auth/login`, form({ username: USERNAME, password: PASSWORD }))
  const cookie = login.headers.get("set-cookie")?.split(";")[0] ?? ""
  const added = yield* request(`${url}/api/v2/torrents/add`, {
    ...form({ urls: MAGNET, category: CATEGORY }),
    headers: { "content-type": "application/x-www-form-urlencoded", cookie }
  })
  yield* Console.log(`  POST /api/v2/torrents/add  ${RELEASE} in category ${CATEGORY} → ${yield* text(added)}`)

  const info = Effect.gen(function* () {
    const answer = yield* request(`${url}/api/v2/torrents/info?category=${CATEGORY}`, { headers: { cookie } })
    const list = (yield* Effect.promise(() => answer.json())) as ReadonlyArray<TorrentInfo>
    return list.find((t) => t.name === RELEASE)
  })
  let last = ""
  const end = (yield* Clock.currentTimeMillis) + STEP_DEADLINE_MS
  while ((yield* Clock.currentTimeMillis) < end) {
    yield* runner.round
    const torrent = yield* info
    if (torrent !== undefined && torrent.state !== last) {
      last = torrent.state
      yield* Console.log(`  torrents/info: ${torrent.state}, progress ${torrent.progress.toFixed(2)}`)
      if (torrent.progress === 1) {
        yield* Console.log(`  ✓ complete on disk at content_path ${torrent.content_path}`)
        return
      }
    }
    yield* mirror
    yield* Effect.sleep(Duration.millis(250))
  }
  yield* Console.log(`  ! ${RELEASE} did not complete within ${STEP_DEADLINE_MS / 1000} s`)
})

// ---------------------------------------------------------------------------------------

const form = (fields: Record<string, string>): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString()
})

const request = (url: string, init: RequestInit = {}) =>
  Effect.tryPromise({
    try: () => fetch(url, init),
    catch: (cause) => new Error(`demo: ${url}: ${String(cause)}`)
  }).pipe(Effect.orDie)

const text = (response: Response) => Effect.promise(() => response.text())
