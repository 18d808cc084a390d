/**
 * The whole line, as Sonarr and Radarr drive it: the real `dlsync run` daemon with
 * `[qbittorrent]` on a loopback port, a client no one here wrote (@ctrl/qbittorrent), the
 * emulator over real HTTP and the real disk. The app is told "complete" only when every
 * file is whole on disk at content_path, nothing temporary ever shows in its category
 * folder, and a removal with deleteFiles takes the service's record and the local copy.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { QBittorrent } from "@ctrl/qbittorrent"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { makeTorrent } from "../support/torrentFixture.ts"
import {
  assertNothingTemporary,
  assertWholeOnDisk,
  blockDownload,
  creations,
  downloadTimings,
  intakeRows,
  remoteFilesBelow,
  serviceDownloads,
  sleep,
  startDaemon,
  stopDaemons,
  trashed
} from "./arrSupport.ts"
import { eventually, freePort, type Sandbox, sandbox, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await stopDaemons()
  await box?.close()
  box = undefined
})

const USERNAME = "sonarr"
const PASSWORD = "e2e-secret"
const HASH_A = "4f1e6a0c7b2d3e5f60718293a4b5c6d7e8f90a1b"
const HASH_B = "a1b2c3d4e5f60718293a4b5c6d7e8f9001122334"

/** States the apps read as done (qBittorrent 5 names and the older ones). */
const COMPLETED_STATES = new Set(["uploading", "stalledUP", "queuedUP", "forcedUP", "pausedUP", "stoppedUP"])

/** The daemon with the qBittorrent API on a free port, and a signed-in client once it answers. */
const daemonWithQbittorrent = async (b: Sandbox, env: Record<string, string> = {}) => {
  const port = await freePort()
  const daemon = startDaemon(b, {
    DLSYNC_QBITTORRENT_LISTEN: `127.0.0.1:${port}`,
    DLSYNC_QBITTORRENT_USERNAME: USERNAME,
    DLSYNC_QBITTORRENT_PASSWORD: PASSWORD,
    ...env
  })
  const client = new QBittorrent({ baseUrl: `http://127.0.0.1:${port}`, username: USERNAME, password: PASSWORD })
  await eventually(
    () => client.login().catch(() => false),
    "the qBittorrent API to answer",
    30_000,
    () => daemon.output().stderr
  )
  return { daemon, client, port }
}

/**
 * Polls torrents/info?category= every 50 ms until `stop` says so; at every poll the category
 * folder holds nothing temporary, and each time the item says complete its files are whole
 * at content_path. Returns the states seen, in order, without repeats.
 */
const watchTransfer = async (
  b: Sandbox,
  client: QBittorrent,
  category: string,
  hash: string,
  remoteFolder: string,
  completePolls = 5
) => {
  const states: Array<string> = []
  /** Polls whose progress counted bytes still on their way (more than the files whole on disk make). */
  let aheadOfDisk = 0
  let complete = 0
  let polls = 0
  const end = Date.now() + 90_000
  while (complete < completePolls) {
    if (Date.now() > end) assert.fail(`not complete after ${polls} polls; states seen: ${states.join(" → ")}`)
    const torrents = await client.listTorrents({ category })
    polls += 1
    assertNothingTemporary(b, category, `poll ${polls}`)
    const item = torrents.find((t) => t.hash === hash)
    if (item !== undefined) {
      if (states.at(-1) !== item.state) states.push(item.state)
      const done = item.progress === 1 || COMPLETED_STATES.has(item.state)
      if (done) {
        assert.strictEqual(item.progress, 1, `poll ${polls}: a completed state with progress ${item.progress}`)
        assert.isTrue(COMPLETED_STATES.has(item.state), `poll ${polls}: progress 1 in state ${item.state}`)
        assert.strictEqual(item.amount_left, 0)
        assertWholeOnDisk(b, remoteFolder, item.content_path, `poll ${polls} (complete)`)
        complete += 1
      } else {
        assert.isBelow(item.progress, 1)
        const remote = remoteFilesBelow(b, remoteFolder)
        const total = remote.reduce((n, f) => n + f.size, 0)
        const onDisk = remote.filter((f) => Fs.existsSync(Path.join(b.root, f.path))).reduce((n, f) => n + f.size, 0)
        if (total > 0 && item.progress > onDisk / total + 0.001) aheadOfDisk += 1
      }
    }
    await sleep(50)
  }
  return { states, aheadOfDisk }
}

describe("Sonarr's way in: the qBittorrent API of the running daemon", { timeout: 180_000 }, () => {
  it("a magnet in category tv: complete only when whole on disk, nothing temporary seen; deleteFiles removes it everywhere", async () => {
    box = await sandbox()
    const b = box
    await downloadTimings(b, 200, 1_500, 200)
    // The account polled rarely (the default is a minute): the intake's wake-up starts the
    // transfer, which is slow enough that many polls fall inside it.
    const { client } = await daemonWithQbittorrent(b, {
      DLSYNC_TRANSFERS_BANDWIDTH_LIMIT: "2 MiB/s",
      DLSYNC_SYNC_POLL_INTERVAL: "30s"
    })

    assert.isTrue(await client.createCategory("tv"))
    assert.deepStrictEqual(Object.keys(await client.getCategories()), ["tv"])
    const magnet = `magnet:?xt=urn:btih:${HASH_A}&dn=Show.S01E01&xl=6000000&tr=udp%3A%2F%2Ft.example%3A80`
    assert.isTrue(await client.addMagnet(magnet, { category: "tv" }))

    const { states, aheadOfDisk } = await watchTransfer(b, client, "tv", HASH_A, "tv/Show.S01E01")
    assert.strictEqual(states.at(-1), "stoppedUP")
    assert.include(states, "downloading", `states seen: ${states.join(" → ")}`)
    // The 6 MB file takes seconds: meanwhile progress moves with its bytes, not only per whole file.
    assert.isAbove(aheadOfDisk, 0, "progress counted the running transfer")
    const [done] = await client.listTorrents({ hashes: HASH_A })
    assert.strictEqual(done?.content_path, Path.join(b.root, "tv", "Show.S01E01"))
    assert.strictEqual(done?.save_path, Path.join(b.root, "tv"))
    const files = await client.torrentFiles(HASH_A)
    assert.deepStrictEqual(
      files.map((f) => [f.name, f.progress]).sort(),
      [
        ["Show.S01E01/Extras/Show.S01E01.sample.mkv", 1],
        ["Show.S01E01/Show.S01E01.mkv", 1],
        ["Show.S01E01/Subs/Show.S01E01.en.srt", 1]
      ].sort()
    )
    const [download] = await serviceDownloads(b)
    assert.isDefined(download)

    // Removed in the app with its files: the service's record and files go, the local copy to the trash.
    assert.isTrue(await client.removeTorrent(HASH_A, true))
    assert.deepStrictEqual(await client.listTorrents({ category: "tv" }), [])
    await eventually(async () => (await serviceDownloads(b)).length === 0, "the download record gone on the service")
    await waitUntil(
      () => !Fs.existsSync(Path.join(b.root, "tv", "Show.S01E01", "Show.S01E01.mkv")),
      30_000,
      "the local copy removed"
    )
    assert.include(trashed(b).join("\n"), "Show.S01E01.mkv", "on_remote_delete = trash: the copy is in the trash")
  })

  it("an uploaded .torrent in a category; a re-added magnet is the same item; a blocked download is `error` with its reason, in `status` too", async () => {
    box = await sandbox()
    const b = box
    await downloadTimings(b, 100, 300, 100)
    const statusPort = await freePort()
    const { client } = await daemonWithQbittorrent(b, { DLSYNC_SERVER_LISTEN: `127.0.0.1:${statusPort}` })

    const pack = makeTorrent("Pack.S02", [
      { path: ["Pack.S02E01.mkv"], size: 120_000 },
      { path: ["Pack.S02E02.mkv"], size: 90_000 }
    ])
    assert.isTrue(await client.addTorrent(pack.content, { category: "tv", filename: "Pack.S02.torrent" }))
    const { states } = await watchTransfer(b, client, "tv", pack.hash, "tv/Pack.S02", 2)
    assert.strictEqual(states.at(-1), "stoppedUP")

    // Added again after it completed, and again by its magnet: the same item, one download on the service.
    assert.isTrue(await client.addTorrent(pack.content, { category: "tv", filename: "Pack.S02.torrent" }))
    assert.isTrue(await client.addMagnet(`magnet:?xt=urn:btih:${pack.hash.toUpperCase()}&dn=Pack.S02`))
    const listed = await client.listTorrents()
    assert.deepStrictEqual(
      listed.map((t) => [t.hash, t.state]),
      [[pack.hash, "stoppedUP"]]
    )
    assert.strictEqual((await serviceDownloads(b)).length, 1)
    assert.strictEqual(creations(b).length, 1)

    // A download the service blocks while it runs: `error`, the service's reason shown.
    await downloadTimings(b, 100, 60_000, 100)
    assert.isTrue(await client.addMagnet(`magnet:?xt=urn:btih:${HASH_B}&dn=Blocked.Movie&xl=5000`, { category: "tv" }))
    await waitUntil(
      () => intakeRows(b).some((r) => r.id === `btih:${HASH_B}` && r.download_id !== null),
      30_000,
      "the blocked one sent"
    )
    const id = intakeRows(b).find((r) => r.id === `btih:${HASH_B}`)?.download_id ?? assert.fail("no download id")
    await blockDownload(b, id, "Verify your e-mail address")
    await eventually(
      async () => (await client.listTorrents({ hashes: HASH_B }))[0]?.state === "error",
      "the block shown as error"
    )
    const [blocked] = await client.listTorrents({ filter: "errored" })
    assert.strictEqual(blocked?.hash, HASH_B)
    assert.strictEqual(blocked?.progress, 0)
    // Not in @ctrl/qbittorrent's type: qBittorrent 5's `comment` field, where the reason is shown.
    assert.strictEqual(
      (blocked as unknown as { comment?: string }).comment,
      "blocked by the service: Verify your e-mail address"
    )
    assert.strictEqual(
      (await client.torrentProperties(HASH_B)).comment,
      "blocked by the service: Verify your e-mail address"
    )

    // `dlsync status`, --json and /api/status show the queue: name, category, state, reason, progress.
    const expected = [
      {
        id: `btih:${pack.hash}`,
        name: "Pack.S02",
        category: "tv",
        via: "qbittorrent",
        state: "completed",
        reason: null,
        percent: 100,
        size: 210_000,
        remaining: 0,
        rate: 0,
        etaSeconds: 0,
        contentPath: Path.join(b.root, "tv", "Pack.S02"),
        selection: null
      },
      {
        id: `btih:${HASH_B}`,
        name: "Blocked.Movie",
        category: "tv",
        via: "qbittorrent",
        state: "failed",
        reason: "blocked by the service: Verify your e-mail address",
        percent: 0,
        // The service's size of the download (its files, sample and subtitles included), as the API showed it.
        size: blocked?.size,
        remaining: blocked?.size,
        rate: 0,
        etaSeconds: null,
        contentPath: Path.join(b.root, "tv", "Blocked.Movie"),
        selection: null
      }
    ]
    const status = await b.run(["status"])
    assert.strictEqual(status.code, 0, status.stderr)
    assert.include(status.stdout, "\nintake:          2 item(s): 1 completed, 1 failed\n")
    assert.include(
      status.stdout,
      "\n  Blocked.Movie (tv): failed 0% — blocked by the service: Verify your e-mail address\n"
    )
    assert.notInclude(status.stdout, "Pack.S02 (tv)", "completed items are counted, not listed")
    const json = await b.run(["status", "--json"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.deepStrictEqual(JSON.parse(json.stdout).intake, { counts: { completed: 1, failed: 1 }, items: expected })
    const api = (await (await fetch(`http://127.0.0.1:${statusPort}/api/status`)).json()) as { intake: unknown }
    assert.deepStrictEqual(api.intake, { counts: { completed: 1, failed: 1 }, items: expected })
  })
  /**
   * A crash with an add in flight, at the two points where a download could be lost or made
   * twice: recorded but not yet sent (the round held up reading the account's limits), and
   * sent but its answer not stored (the service's answer arriving at one byte a second).
   * After the restart: exactly one download on the service, and the item completes.
   */
  for (const point of [
    { when: "recorded, not yet sent", path: "/api/v1/account", method: "GET", sent: 0, phase: "new" },
    {
      when: "between the POST and storing its answer",
      path: "/api/v1/downloads",
      method: "POST",
      sent: 1,
      phase: "sending"
    }
  ] as const) {
    it(`SIGKILL of the daemon with an add through the API ${point.when}: one download on the service, and it completes`, async () => {
      box = await sandbox()
      const b = box
      await downloadTimings(b, 100, 300, 100)
      b.emu.control.addFault({ kind: "slow", path: point.path, method: point.method, count: 100, bytesPerSecond: 1 })
      const first = await daemonWithQbittorrent(b)
      const magnet = `magnet:?xt=urn:btih:${HASH_A}&dn=Killed.Show&xl=20000`
      assert.isTrue(await first.client.addMagnet(magnet, { category: "tv" }))
      const requested = () =>
        b.emu.control.requests({ origin: "api" }).some((r) => r.method === point.method && r.path === point.path)
      await waitUntil(
        () => requested() && intakeRows(b).some((r) => r.id === `btih:${HASH_A}` && r.phase === point.phase),
        30_000,
        `the add ${point.when}`
      )
      first.daemon.child.kill("SIGKILL")
      await first.daemon.exit
      assert.strictEqual(creations(b).length, point.sent)
      const [row] = intakeRows(b)
      assert.strictEqual(row?.phase, point.phase)
      assert.isNull(row?.download_id ?? null)

      b.emu.control.clearFaults()
      const second = await daemonWithQbittorrent(b)
      const { states } = await watchTransfer(b, second.client, "tv", HASH_A, "tv/Killed.Show", 1)
      assert.strictEqual(states.at(-1), "stoppedUP")
      assert.strictEqual((await serviceDownloads(b)).length, 1, "one download on the service")
      assert.strictEqual(creations(b).length, 1, "one POST /downloads in all")
      // The same release added again after the restart: still the one item.
      assert.isTrue(await second.client.addMagnet(magnet, { category: "tv" }))
      assert.lengthOf(await second.client.listTorrents(), 1)
      assert.strictEqual((await serviceDownloads(b)).length, 1)
    })
  }
})
