/**
 * The intake queue end to end: `dlsync add` records a release, the daemon (`dlsync run`)
 * sends it to the emulator, answers its selections, follows it and mirrors its files into
 * `<root>/<category>/` even where `[mirror]` filters would leave them out; the store's
 * record says completed only once every file is on disk.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { bencode } from "../intake/bencode.ts"
import { contentMismatches, type Sandbox, sandbox, snapshot, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
const daemons: Array<ReturnType<Sandbox["spawn"]>> = []
afterEach(async () => {
  for (const d of daemons.splice(0)) {
    if (d.child.exitCode === null) {
      d.child.kill("SIGTERM")
      await d.exit.catch(() => undefined)
    }
  }
  await box?.close()
  box = undefined
})

const HASH_A = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const HASH_B = "0123456789abcdef0123456789abcdef01234567"
const HASH_C = "89abcdef0123456789abcdef0123456789abcdef"

const control = async (b: Sandbox, path: string, body: unknown = {}) =>
  fetch(`${b.emu.controlUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** POST /downloads requests the emulator received. */
const creations = (b: Sandbox) =>
  b.emu.control.requests({ origin: "api" }).filter((r) => r.method === "POST" && r.path.startsWith("/api/v1/downloads"))

/** The downloads the emulator holds. */
const serviceDownloads = async (
  b: Sandbox
): Promise<ReadonlyArray<{ readonly id: string; readonly status: string }>> => {
  const body: unknown = await (await fetch(`${b.emu.controlUrl}/downloads`)).json()
  return (body as { data: Array<{ id: string; status: string }> }).data
}

/** The emulator's downloads run in 0.1 + 0.3 + 0.1 s. */
/** The account's limits with only a daily download cap. */
const dailyCap = (remaining: number, resetsAt: string) => ({
  daily_downloads: { limit: 1, remaining, resets_at: resetsAt },
  daily_download_bytes: null,
  max_file_size_bytes: null,
  concurrent_downloads: null,
  concurrent_torrents: null
})

const fastDownloads = async (b: Sandbox) => {
  const response = await fetch(`${b.emu.controlUrl}/downloads/timings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ processing_ms: 100, downloading_ms: 300, finalizing_ms: 100 })
  })
  assert.strictEqual(response.status, 204)
}

const writeConfig = (b: Sandbox, toml: string) => {
  const dir = Path.join(b.dir, "config", "dlsync")
  Fs.mkdirSync(dir, { recursive: true })
  Fs.writeFileSync(Path.join(dir, "config.toml"), toml)
}

interface IntakeRow {
  readonly id: string
  readonly name: string
  readonly phase: string
  readonly status: string | null
  readonly reason: string | null
  readonly download_id: string | null
  readonly completed_at: number | null
  readonly not_before: number | null
}

const intakes = (b: Sandbox): Array<IntakeRow> => {
  const file = Path.join(b.stateDir, "state.db")
  if (!Fs.existsSync(file)) return []
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
  try {
    db.pragma("busy_timeout = 5000")
    return db.prepare("SELECT * FROM intakes ORDER BY added_at, id").all() as Array<IntakeRow>
  } catch {
    return []
  } finally {
    db.close()
  }
}

/** Paths of the store's locally-deleted markers (mirror.on_local_delete = respect). */
const locallyDeleted = (b: Sandbox): Array<string> => {
  const db = new BetterSqlite3(Path.join(b.stateDir, "state.db"), { readonly: true, fileMustExist: true })
  try {
    db.pragma("busy_timeout = 5000")
    return (db.prepare("SELECT path FROM locally_deleted").all() as Array<{ path: string }>).map((r) => r.path)
  } finally {
    db.close()
  }
}

const intake = (b: Sandbox, id: string) => intakes(b).find((r) => r.id === id)

const startDaemon = (b: Sandbox, env: Record<string, string> = {}) => {
  const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1s", ...env }, deadlineMs: 120_000 })
  daemons.push(daemon)
  return daemon
}

/** Files and folders below `rel` in the root. */
const below = (b: Sandbox, rel: string) =>
  Object.keys(snapshot(b.root))
    .filter((p) => p === rel || p.startsWith(`${rel}/`))
    .sort()

describe("dlsync add and the intake queue", { timeout: 120_000 }, () => {
  it("a magnet with two selection stages lands in its category folder, outside the mirror's filters", async () => {
    box = await sandbox()
    const b = box
    await fastDownloads(b)
    writeConfig(b, '[categories.tv]\nselection = "largest"\n')
    // The mirror's filters select another folder only: the intake's files come all the same.
    const daemon = startDaemon(b, { DLSYNC_MIRROR_FOLDERS: "Movies" })

    const magnet = `magnet:?xt=urn:btih:${HASH_A}&dn=Show.stages&xl=500000&tr=udp%3A%2F%2Ft.example%3A80`
    const added = await b.run(["add", magnet, "--category", "tv"])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, new RegExp(`^added Show\\.stages \\(btih:${HASH_A}\\) to category tv$`, "m"))

    // Until it completes, whatever shows in the category folder is the finished file: never a temporary one.
    const video = "tv/Show.stages/Show.stages.2160p.mkv"
    await waitUntil(
      () => {
        for (const path of below(b, "tv")) {
          if (path !== "tv" && path !== "tv/Show.stages" && path !== video) assert.fail(`unexpected ${path}`)
        }
        if (Fs.existsSync(Path.join(b.root, video))) {
          assert.strictEqual(Fs.statSync(Path.join(b.root, video)).size, 500_000)
        }
        const completed = intake(b, `btih:${HASH_A}`)?.completed_at != null
        if (completed) assert.isTrue(Fs.existsSync(Path.join(b.root, video)), "completed only with the file on disk")
        return completed
      },
      60_000,
      "the intake completed"
    )
    assert.deepStrictEqual(below(b, "tv"), ["tv", "tv/Show.stages", video])
    assert.strictEqual(Fs.statSync(Path.join(b.root, "tv/Show.stages/Show.stages.2160p.mkv")).size, 500_000)
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])

    // Added again: the same item, no second download.
    const again = await b.run(["add", magnet, "--category", "tv"])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.match(
      again.stdout,
      /^already present: Show\.stages \(btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a\) in category tv, completed$/m
    )
    assert.strictEqual(creations(b).length, 1)
    assert.strictEqual((await serviceDownloads(b)).length, 1)

    // The app imports it by moving the file away: a local deletion dlsync respects (no new download).
    Fs.renameSync(Path.join(b.root, video), Path.join(b.dir, "imported.mkv"))
    daemon.child.kill("SIGHUP")
    await waitUntil(() => locallyDeleted(b).includes(video), 30_000, "the move seen as a local deletion")
    assert.isFalse(Fs.existsSync(Path.join(b.root, video)))
    assert.strictEqual(intake(b, `btih:${HASH_A}`)?.phase, "sent")
    assert.isNotNull(intake(b, `btih:${HASH_A}`)?.completed_at)
  })

  it("takes an uploaded .torrent, an NZB, a URL, a cached torrent; parks an uncached one; one line per argument", async () => {
    box = await sandbox()
    const b = box
    await fastDownloads(b)
    writeConfig(b, "[categories.movies]\ncached_only = true\n")
    b.emu.control.setCached([HASH_B], true)
    startDaemon(b)

    const torrentFile = Path.join(b.dir, "Pack.torrent")
    Fs.writeFileSync(
      torrentFile,
      bencode({
        announce: "http://tracker.example/announce",
        info: {
          name: "Pack",
          "piece length": 16384,
          pieces: new Uint8Array(20),
          files: [
            { length: 120_000, path: ["Pack.E01.mkv"] },
            { length: 30_000, path: ["Pack.E02.mkv"] }
          ]
        }
      })
    )
    const nzbFile = Path.join(b.dir, "News.Show.nzb")
    Fs.writeFileSync(
      nzbFile,
      '<?xml version="1.0"?>\n<nzb xmlns="http://www.newzbin.com/DTD/2003/nzb">' +
        '<file subject="[1/1] - &quot;News.Show.mkv&quot; yEnc"><segments><segment bytes="70000" number="1">a@b</segment>' +
        '<segment bytes="10000" number="2">c@d</segment></segments></file></nzb>'
    )
    const notTorrent = Path.join(b.dir, "broken.torrent")
    Fs.writeFileSync(notTorrent, "hello")

    const tv = await b.run([
      "add",
      torrentFile,
      nzbFile,
      notTorrent,
      Path.join(b.dir, "missing.nzb"),
      "--category",
      "tv"
    ])
    assert.strictEqual(tv.code, 1, tv.stderr)
    assert.match(tv.stdout, /^added Pack \(btih:[0-9a-f]{40}\) to category tv$/m)
    assert.match(tv.stdout, /^added News\.Show \(sha256:[0-9a-f]{64}\) to category tv$/m)
    assert.match(tv.stderr, /^cannot read .*broken\.torrent: not a torrent file \(no bencoded info dictionary\)$/m)
    assert.match(tv.stderr, /^cannot read .*missing\.nzb: no such file/m)

    const url = "https://files.example.com/a/Movie.One.mkv?size=200000"
    const movies = await b.run([
      "add",
      `magnet:?xt=urn:btih:${HASH_B}&dn=Cached.Movie&xl=300000`,
      `magnet:?xt=urn:btih:${HASH_C}&dn=Uncached.Movie&xl=300000`,
      "--category",
      "movies"
    ])
    assert.strictEqual(movies.code, 0, movies.stderr)
    // The emulator fails a source named "fail" while it downloads.
    const direct = await b.run([
      "add",
      url,
      `magnet:?xt=urn:btih:${HASH_A}&dn=Will.fail&xl=1000`,
      "--category",
      "direct"
    ])
    assert.strictEqual(direct.code, 0, direct.stderr)

    const done = () => intakes(b).filter((r) => r.completed_at !== null).length
    await waitUntil(() => done() === 4, 90_000, "four intakes completed")
    await waitUntil(() => intake(b, `btih:${HASH_A}`)?.phase === "failed", 30_000, "the failing one failed")
    assert.strictEqual(intake(b, `btih:${HASH_A}`)?.reason, "failed on the service: The source stopped responding")
    assert.deepStrictEqual(below(b, "tv"), [
      "tv",
      "tv/News.Show",
      "tv/News.Show/News.Show.mkv",
      "tv/Pack",
      "tv/Pack/Pack.E01.mkv",
      "tv/Pack/Pack.E02.mkv"
    ])
    assert.strictEqual(Fs.statSync(Path.join(b.root, "tv/News.Show/News.Show.mkv")).size, 80_000)
    assert.deepStrictEqual(below(b, "direct"), ["direct", "direct/Movie.One.mkv"])
    assert.deepStrictEqual(below(b, "movies"), [
      "movies",
      "movies/Cached.Movie",
      "movies/Cached.Movie/Cached.Movie.mkv",
      "movies/Cached.Movie/Extras",
      "movies/Cached.Movie/Extras/Cached.Movie.sample.mkv",
      "movies/Cached.Movie/Subs",
      "movies/Cached.Movie/Subs/Cached.Movie.en.srt"
    ])
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
    const uncached = intake(b, `btih:${HASH_C}`)
    assert.strictEqual(uncached?.phase, "parked")
    assert.strictEqual(uncached?.reason, "not cached on the service (categories.movies.cached_only = true)")
    // Nothing was sent for the uncached one.
    assert.strictEqual((await serviceDownloads(b)).length, 5)
    assert.strictEqual(creations(b).length, 5)
  })

  it("a blocked download shows the service's reason; a daily cap of 1 holds the second until the cap allows", async () => {
    box = await sandbox()
    const b = box
    await fastDownloads(b)
    const resetsAt = new Date(Date.now() + 4_000).toISOString()
    b.emu.control.updateAccount({ limits: dailyCap(1, resetsAt) })
    // Slow downloads, so the first one can be blocked while it runs.
    await control(b, "/downloads/timings", { processing_ms: 100, downloading_ms: 60_000, finalizing_ms: 100 })
    startDaemon(b)
    const first = await b.run([
      "add",
      `magnet:?xt=urn:btih:${HASH_A}&dn=First&xl=1000`,
      `magnet:?xt=urn:btih:${HASH_B}&dn=Second&xl=1000`
    ])
    assert.strictEqual(first.code, 0, first.stderr)

    await waitUntil(() => intake(b, `btih:${HASH_A}`)?.download_id != null, 30_000, "the first sent")
    await waitUntil(() => intake(b, `btih:${HASH_B}`)?.not_before != null, 30_000, "the second held")
    const held = intake(b, `btih:${HASH_B}`)
    assert.strictEqual(held?.phase, "new")
    assert.strictEqual(held?.reason, `the account's daily download limit (1) is used up; it resets at ${resetsAt}`)
    assert.strictEqual(held?.not_before, Date.parse(resetsAt))

    const id = intake(b, `btih:${HASH_A}`)?.download_id ?? ""
    assert.strictEqual(
      (await control(b, `/downloads/${id}/block`, { message: "Verify your e-mail address" })).status,
      204
    )
    await waitUntil(() => intake(b, `btih:${HASH_A}`)?.status === "blocked", 30_000, "the block seen")
    assert.strictEqual(intake(b, `btih:${HASH_A}`)?.reason, "blocked by the service: Verify your e-mail address")

    // The day turns: the service allows one more, and the held one goes.
    b.emu.control.updateAccount({ limits: dailyCap(1, new Date(Date.now() + 86_400_000).toISOString()) })
    await waitUntil(() => intake(b, `btih:${HASH_B}`)?.download_id != null, 30_000, "the second sent")
    assert.strictEqual((await serviceDownloads(b)).length, 2)
    assert.strictEqual(creations(b).length, 2)
  })

  it("SIGKILL between the POST and storing its answer: exactly one download on the service afterwards", async () => {
    box = await sandbox()
    const b = box
    await fastDownloads(b)
    // The service creates the download, then answers at one byte a second.
    b.emu.control.addFault({ kind: "slow", path: "/api/v1/downloads", method: "POST", count: 1, bytesPerSecond: 1 })
    const daemon = startDaemon(b)
    const added = await b.run(["add", `magnet:?xt=urn:btih:${HASH_A}&dn=Killed&xl=2000`, "--category", "tv"])
    assert.strictEqual(added.code, 0, added.stderr)
    await waitUntil(
      () => intake(b, `btih:${HASH_A}`)?.phase === "sending" && creations(b).length === 1,
      30_000,
      "the POST out, its answer not stored"
    )
    daemon.child.kill("SIGKILL")
    await daemon.exit
    assert.strictEqual(intake(b, `btih:${HASH_A}`)?.phase, "sending")
    assert.strictEqual(intake(b, `btih:${HASH_A}`)?.download_id, null)

    startDaemon(b)
    await waitUntil(() => intake(b, `btih:${HASH_A}`)?.completed_at != null, 60_000, "the intake completed")
    assert.strictEqual((await serviceDownloads(b)).length, 1, "one download on the service")
    assert.strictEqual(creations(b).length, 1, "one POST /downloads in all")
    const lookups = b.emu.control
      .requests({ origin: "api" })
      .filter((r) => r.method === "GET" && r.path.split("?")[0] === "/api/v1/downloads")
    assert.isAbove(lookups.length, 0, "looked up by client_reference")
    assert.deepStrictEqual(below(b, "tv").includes("tv/Killed/Killed.mkv"), true)
  })

  it("without a daemon, `run --once` sends what `add` recorded, and a later one mirrors and completes it", async () => {
    box = await sandbox()
    const b = box
    await fastDownloads(b)
    const added = await b.run(["add", "https://files.example.com/x/Cron.Movie.mkv?size=4096", "--category", "films"])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(
      added.stdout,
      /^no dlsync is running with this state dir: `dlsync run` sends and mirrors what was added$/m
    )
    const id = intakes(b)[0]?.id ?? assert.fail("no intake recorded")
    for (let run = 0; run < 4 && intake(b, id)?.completed_at == null; run++) {
      const once = await b.run(["run", "--once"])
      assert.strictEqual(once.code, 0, once.stderr)
      if (run === 0) assert.isNotNull(intake(b, id)?.download_id, "sent by the first run")
    }
    assert.isNotNull(intake(b, id)?.completed_at)
    assert.deepStrictEqual(below(b, "films"), ["films", "films/Cron.Movie.mkv"])
    assert.strictEqual((await serviceDownloads(b)).length, 1)
  })
})
