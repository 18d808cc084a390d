/**
 * The whole line through the SABnzbd API, as Sonarr and Radarr drive it (raw HTTP, the
 * calls of docs/arr-download-client-surface.md): the real `dlsync run` daemon with
 * `[sabnzbd]` on a loopback port, the emulator over real HTTP and the real disk. History
 * says Completed only when every file is whole on disk at `storage`; nothing temporary ever
 * shows in the category folder; a delete with del_files takes the service's record and the
 * local copy.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import {
  assertNothingTemporary,
  assertWholeOnDisk,
  downloadTimings,
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

const API_KEY = "0123456789abcdef0123456789abcdef"

const NZB = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<nzb xmlns="http://www.newzbin.com/DTD/2003/nzb">\n' +
    '<file poster="p@example" date="1" subject="[1/2] - &quot;Show.S03E04.mkv&quot; yEnc (1/2)"><groups><group>a.b</group></groups>' +
    '<segments><segment bytes="3000000" number="1">s1@example</segment><segment bytes="2000000" number="2">s2@example</segment></segments></file>\n' +
    '<file poster="p@example" date="1" subject="[2/2] - &quot;Show.S03E04.nfo&quot; yEnc (1/1)"><groups><group>a.b</group></groups>' +
    '<segments><segment bytes="900" number="1">s3@example</segment></segments></file>\n</nzb>\n'
)

type Json = Record<string, unknown>

interface Slot {
  readonly nzo_id: string
  readonly status: string
  readonly storage?: string
  readonly fail_message?: string
  readonly percentage?: string
}

const sabnzbd = (port: number) => {
  const base = `http://127.0.0.1:${port}/sabnzbd/api`
  const get = async (params: Record<string, string>): Promise<Json> => {
    const query = new URLSearchParams({ output: "json", apikey: API_KEY, ...params })
    const response = await fetch(`${base}?${query}`)
    assert.strictEqual(response.status, 200)
    return (await response.json()) as Json
  }
  const addfile = async (fileName: string, content: Buffer, category: string): Promise<Json> => {
    const form = new FormData()
    form.append("name", new Blob([content], { type: "application/x-nzb" }), fileName)
    const query = new URLSearchParams({
      mode: "addfile",
      cat: category,
      priority: "0",
      output: "json",
      apikey: API_KEY
    })
    const response = await fetch(`${base}?${query}`, { method: "POST", body: form })
    assert.strictEqual(response.status, 200)
    return (await response.json()) as Json
  }
  const queue = async (category: string) =>
    ((await get({ mode: "queue", category, start: "0", limit: "0" })).queue as { slots: Array<Slot> }).slots
  const history = async (category: string) =>
    ((await get({ mode: "history", category, start: "0", limit: "60" })).history as { slots: Array<Slot> }).slots
  return { get, addfile, queue, history }
}

const daemonWithSabnzbd = async (b: Sandbox, env: Record<string, string> = {}) => {
  const port = await freePort()
  const daemon = startDaemon(b, { DLSYNC_SABNZBD_LISTEN: `127.0.0.1:${port}`, DLSYNC_SABNZBD_API_KEY: API_KEY, ...env })
  const api = sabnzbd(port)
  await eventually(
    () =>
      api
        .get({ mode: "version" })
        .then((r) => typeof r.version === "string")
        .catch(() => false),
    "the SABnzbd API to answer",
    30_000,
    () => daemon.output().stderr
  )
  return { daemon, api }
}

describe("Sonarr's way in: the SABnzbd API of the running daemon", { timeout: 180_000 }, () => {
  it("an NZB in category tv: queue, then history Completed at storage only when whole on disk; del_files removes it everywhere", async () => {
    box = await sandbox()
    const b = box
    await downloadTimings(b, 200, 1_500, 200)
    // The account polled rarely (the default is a minute): the intake's wake-up starts the
    // transfer, which is slow enough that many polls fall inside it.
    const { api } = await daemonWithSabnzbd(b, {
      DLSYNC_TRANSFERS_BANDWIDTH_LIMIT: "2 MiB/s",
      DLSYNC_SYNC_POLL_INTERVAL: "30s"
    })

    const added = await api.addfile("Show.S03E04.nzb", NZB, "tv")
    assert.strictEqual(added.status, true)
    const [nzoId] = added.nzo_ids as Array<string>
    assert.match(nzoId ?? "", /^SABnzbd_nzo_[0-9a-f]{64}$/)

    // Sonarr's poll: queue and history, every 50 ms, for the whole transfer.
    const seen: Array<string> = []
    let completed = 0
    let polls = 0
    const end = Date.now() + 90_000
    while (completed < 5) {
      if (Date.now() > end) assert.fail(`not completed after ${polls} polls; seen: ${seen.join(" → ")}`)
      // Two requests are two moments. History first, then the queue: a job that completes
      // between them is in neither for that poll; in both only if it went back to the queue.
      const history = await api.history("tv")
      const queue = await api.queue("tv")
      polls += 1
      assertNothingTemporary(b, "tv", `poll ${polls}`)
      const inQueue = queue.find((s) => s.nzo_id === nzoId)
      const inHistory = history.find((s) => s.nzo_id === nzoId)
      assert.isFalse(inQueue !== undefined && inHistory !== undefined, `poll ${polls}: in both queue and history`)
      const status =
        inQueue !== undefined
          ? `queue:${inQueue.status}`
          : inHistory !== undefined
            ? `history:${inHistory.status}`
            : "neither"
      if (seen.at(-1) !== status) seen.push(status)
      if (inHistory !== undefined) {
        assert.strictEqual(inHistory.status, "Completed", `poll ${polls}: ${inHistory.fail_message}`)
        assertWholeOnDisk(b, "tv/Show.S03E04", inHistory.storage ?? "", `poll ${polls} (Completed)`)
        completed += 1
      }
      await sleep(50)
    }
    assert.include(seen, "queue:Downloading", `seen: ${seen.join(" → ")}`)
    assert.strictEqual(seen.at(-1), "history:Completed")
    assert.deepStrictEqual(
      Fs.readdirSync(Path.join(b.root, "tv", "Show.S03E04")).sort(),
      ["Show.S03E04.mkv", "Show.S03E04.nfo"],
      "the NZB's files in the job's folder"
    )
    assert.strictEqual(Fs.statSync(Path.join(b.root, "tv", "Show.S03E04", "Show.S03E04.mkv")).size, 5_000_000)

    // Sonarr's removal after import: history delete with del_files.
    const removed = await api.get({ mode: "history", name: "delete", value: nzoId ?? "", del_files: "1" })
    assert.strictEqual(removed.status, true)
    assert.deepStrictEqual(await api.history("tv"), [])
    await eventually(async () => (await serviceDownloads(b)).length === 0, "the download record gone on the service")
    await waitUntil(
      () => !Fs.existsSync(Path.join(b.root, "tv", "Show.S03E04", "Show.S03E04.mkv")),
      30_000,
      "the local copy removed"
    )
    assert.include(trashed(b).join("\n"), "Show.S03E04.mkv", "on_remote_delete = trash: the copy is in the trash")
  })
})
