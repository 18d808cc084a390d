/**
 * A release owns exactly its files, end to end: the real `dlsync run` daemon with both the
 * qBittorrent API (driven by @ctrl/qbittorrent) and the SABnzbd API on, the emulator over
 * real HTTP (whose downloads reuse a folder of the same name) and the real disk.
 * - Two magnets of one name in one category (a re-release, two indexers' copies): each
 *   completes at a path of its own, and the *arr apps' "Remove Completed" of one
 *   (`deleteFiles=true`) takes every byte of it and none of the other, on the service and on
 *   disk. Once a download completed there, the service is not asked about it again.
 * - A category change after completion keeps reporting where the files are.
 * - Each surface sees and acts on its own releases and categories.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { QBittorrent } from "@ctrl/qbittorrent"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { downloadTimings, filesBelow, intakeRows, startDaemon, stopDaemons } from "./arrSupport.ts"
import { eventually, freePort, type Sandbox, sandbox } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await stopDaemons()
  await box?.close()
  box = undefined
})

const USERNAME = "radarr"
const PASSWORD = "e2e-secret"
const API_KEY = "0123456789abcdef0123456789abcdef"
const HASH_A = "7777456789abcdef0123456789abcdef01234567"
const HASH_B = "8888456789abcdef0123456789abcdef01234567"
const magnet = (hash: string) => `magnet:?xt=urn:btih:${hash}&dn=Same.Name.S01&xl=2000`

/** The account's files, each with the download it came from, as "path <download id>". */
const serviceFiles = (b: Sandbox): ReadonlyArray<string> => {
  const tree = b.emu.state.primaryUser.tree
  return [...tree.values()]
    .filter((i) => i.type === "file")
    .map((i) => `${tree.pathOf(i.id).join("/")} <${i.downloadId ?? "none"}>`)
    .sort()
}

/** GET /downloads/{id} requests the emulator answered. */
const follows = (b: Sandbox) =>
  b.emu.control
    .requests({ origin: "api" })
    .filter((r) => r.method === "GET" && /^\/api\/v1\/downloads\/[^/?]+$/.test(r.path)).length

/** Polls of the account's files (the listing mode's GET /files). */
const feedPolls = (b: Sandbox) =>
  b.emu.control.requests({ origin: "api" }).filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/files"))
    .length

const daemon = async (b: Sandbox) => {
  const qbPort = await freePort()
  const sabPort = await freePort()
  const started = startDaemon(b, {
    DLSYNC_QBITTORRENT_LISTEN: `127.0.0.1:${qbPort}`,
    DLSYNC_QBITTORRENT_USERNAME: USERNAME,
    DLSYNC_QBITTORRENT_PASSWORD: PASSWORD,
    DLSYNC_SABNZBD_LISTEN: `127.0.0.1:${sabPort}`,
    DLSYNC_SABNZBD_API_KEY: API_KEY,
    DLSYNC_SABNZBD_CATEGORIES: "books"
  })
  const client = new QBittorrent({ baseUrl: `http://127.0.0.1:${qbPort}`, username: USERNAME, password: PASSWORD })
  await eventually(
    () => client.login().catch(() => false),
    "the qBittorrent API to answer",
    30_000,
    () => started.output().stderr
  )
  const sab = async (params: Record<string, string>) => {
    const query = new URLSearchParams({ output: "json", apikey: API_KEY, ...params })
    return (await (await fetch(`http://127.0.0.1:${sabPort}/api?${query}`)).json()) as Record<string, unknown>
  }
  return { client, sab }
}

describe("a release owns exactly its files", { timeout: 180_000 }, () => {
  it("two magnets of one name: paths of their own; removing one with its files leaves every byte of the other", async () => {
    box = await sandbox()
    const b = box
    await downloadTimings(b, 100, 300, 100)
    const { client } = await daemon(b)
    assert.isTrue(await client.addMagnet(magnet(HASH_A), { category: "movies" }))
    assert.isTrue(await client.addMagnet(magnet(HASH_B), { category: "movies" }))
    const done = async () => {
      const torrents = await client.listTorrents({ category: "movies" })
      return torrents.length === 2 && torrents.every((t) => t.state === "stoppedUP")
    }
    await eventually(done, "both releases complete", 60_000)
    const torrents = await client.listTorrents({ category: "movies" })
    const a = torrents.find((t) => t.hash === HASH_A)
    const other = torrents.find((t) => t.hash === HASH_B)
    assert.isDefined(a)
    assert.isDefined(other)
    assert.notStrictEqual(a?.content_path, other?.content_path, "two releases never report one path")
    for (const t of [a, other]) {
      assert.notStrictEqual(t?.content_path, t?.save_path)
      const names = (await client.torrentFiles(t?.hash ?? "")).map((f) => f.name)
      // Every file the release lists is whole on disk where save_path and its name say.
      for (const name of names) assert.isTrue(Fs.existsSync(Path.join(t?.save_path ?? "", name)), name)
      assert.deepStrictEqual(
        filesBelow(t?.content_path ?? "").map((f) => Path.relative(t?.save_path ?? "", f)),
        [...names].sort(),
        "content_path holds its files and nothing else"
      )
    }
    // Completed on the service: the intake does not ask about them again, over several of its
    // rounds (one every 2 s; the feed is polled every second).
    const followed = follows(b)
    const polled = feedPolls(b)
    await eventually(async () => feedPolls(b) >= polled + 6, "six more polls of the feed", 30_000)
    assert.strictEqual(follows(b), followed)

    const removedId =
      intakeRows(b).find((r) => r.id === `btih:${HASH_A}`)?.download_id ?? assert.fail("no download of A")
    const otherOnService = serviceFiles(b).filter((f) => !f.endsWith(`<${removedId}>`))
    assert.isAbove(serviceFiles(b).length, otherOnService.length)
    const otherOnDisk = filesBelow(other?.content_path ?? "").map((f) => [f, Fs.readFileSync(f).length] as const)
    assert.isAbove(otherOnDisk.length, 0)

    // Radarr's "Remove Completed": the files were imported, the release goes with its files.
    assert.isTrue(await client.removeTorrent(HASH_A, true))
    await eventually(
      async () => !Fs.existsSync(a?.content_path ?? "/") && serviceFiles(b).length === otherOnService.length,
      "the removed release gone from the service and from disk",
      60_000
    )
    assert.deepStrictEqual(serviceFiles(b), otherOnService, "every file of the other release is on the service")
    assert.deepStrictEqual(
      filesBelow(other?.content_path ?? "").map((f) => [f, Fs.readFileSync(f).length] as const),
      otherOnDisk,
      "and on disk, whole"
    )
    const [still] = await client.listTorrents({ hashes: HASH_B })
    assert.strictEqual(still?.state, "stoppedUP")
    assert.strictEqual(still?.progress, 1)

    // A category change after completion keeps reporting where the files are.
    assert.isTrue(await client.createCategory("archive"))
    assert.isTrue(await client.setTorrentCategory(HASH_B, "archive"))
    const [moved] = await client.listTorrents({ hashes: HASH_B })
    assert.strictEqual(moved?.category, "archive")
    assert.strictEqual(moved?.content_path, other?.content_path)
    assert.isTrue(Fs.existsSync(moved?.content_path ?? "/"))
  })

  it("each surface sees and acts on its own releases and categories", async () => {
    box = await sandbox()
    const b = box
    await downloadTimings(b, 100, 60_000, 100)
    const { client, sab } = await daemon(b)
    // Added stopped through qBittorrent, as Sonarr does with "Add Paused".
    assert.isTrue(await client.addMagnet(magnet(HASH_A), { category: "tv", stopped: "true" }))
    const queue = (await sab({ mode: "queue" })).queue as { slots: Array<unknown>; paused: boolean }
    assert.deepStrictEqual(queue.slots, [], "SABnzbd's queue shows none of qBittorrent's releases")
    assert.isFalse(queue.paused, "a stopped torrent does not pause SABnzbd's queue")
    assert.deepStrictEqual(((await sab({ mode: "history" })).history as { slots: Array<unknown> }).slots, [])
    assert.deepStrictEqual(await sab({ mode: "resume" }), { status: true })
    const [stopped] = await client.listTorrents({ hashes: HASH_A })
    assert.strictEqual(stopped?.state, "stoppedDL", "SABnzbd's resume leaves qBittorrent's release stopped")

    // qBittorrent's removeCategories cannot remove a SABnzbd category.
    await client.removeCategory("books")
    const config = (await sab({ mode: "get_config" })).config as { categories: Array<{ name: string }> }
    assert.include(
      config.categories.map((c) => c.name),
      "books"
    )
    assert.notInclude(Object.keys(await client.getCategories()), "books")
  })
})
