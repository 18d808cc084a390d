/**
 * One release's progress, rate and time left as both surfaces and `dlsync status` read them
 * while it moves: the service downloading it (its progress and rate), then the mirror
 * copying its file (a live transfer's bytes and rate), then complete. The store is real and
 * moved as the runner, the feed and the transfer engine move it; each reader's numbers must
 * be the one view's (src/intake/releaseView.ts), named as qBittorrent and SABnzbd name them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { intakeStatus, renderIntake } from "../../src/intake/intakeStatus.ts"
import { QbittorrentServer } from "../../src/qbittorrent/QbittorrentServer.ts"
import { SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { Store } from "../../src/store/Store.ts"
import { folder, intakeOverStore, remoteFile, seedRemote } from "../intake/releaseStore.ts"
import { tempDir } from "../store/helpers.ts"
import { isRecord } from "./shapes.ts"

const KEY = "0123456789abcdef0123456789abcdef"
const HASH = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const MAGNET = `magnet:?xt=urn:btih:${HASH}&dn=Show.S01E01.mkv`
const SIZE = 4 * 1024 * 1024

const surfaces = Effect.gen(function* () {
  const root = tempDir()
  const intake = intakeOverStore(root)
  const qbit = QbittorrentServer.layer({
    settings: { listen: { host: "127.0.0.1", port: 0 }, username: "u", password: Redacted.make("p"), path_map: [] },
    mirrorRoot: root
  })
  const sab = SabnzbdServer.layer({
    settings: {
      listen: { host: "127.0.0.1", port: 0 },
      apiKey: Option.some(Redacted.make(KEY)),
      pathMap: [],
      categories: []
    },
    root
  })
  const context = yield* Layer.build(Layer.mergeAll(qbit, sab).pipe(Layer.provideMerge(intake)))
  return {
    qbit: Context.get(context, QbittorrentServer).url,
    sab: Context.get(context, SabnzbdServer).url ?? assert.fail("no SABnzbd surface"),
    intake: Context.get(context, Intake),
    tables: Context.get(context, IntakeTables),
    store: Context.get(context, Store)
  }
})

/** The runner sent it and the service reports it half downloaded, at 64 KiB/s. */
const halfDownloaded = (tables: IntakeTables["Service"], id: IntakeId, downloadId: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    tables.update(
      id,
      ["new"],
      { phase: "sent", downloadId, status: "downloading", progress: 0.5, size: SIZE, serviceRate: 65_536 },
      now
    )
  )

const torrent = (qbit: string) =>
  Effect.promise(async () => {
    const auth = { authorization: `Basic ${Buffer.from("u:p").toString("base64")}` }
    const list: unknown = await (await fetch(`${qbit}/api/v2/torrents/info?hashes=${HASH}`, { headers: auth })).json()
    const [t] = Array.isArray(list) ? list.filter(isRecord) : []
    return t ?? assert.fail("the torrent is not listed")
  })

const sabQueue = (sab: string) =>
  Effect.promise(async () => {
    const answer: unknown = await (await fetch(`${sab}/api?mode=queue&output=json&apikey=${KEY}`)).json()
    const queue = isRecord(answer) && isRecord(answer.queue) ? answer.queue : assert.fail("no queue")
    return queue
  })

describe("a release's progress while it moves, as each reader shows it", () => {
  it.live(
    "the service's download, then the mirror's copy: one progress, its rate and time left, in qBittorrent's torrents/info and in status",
    () =>
      Effect.gen(function* () {
        const { qbit, intake, tables, store } = yield* surfaces
        const add = yield* Effect.promise(() =>
          fetch(`${qbit}/api/v2/torrents/add`, {
            method: "POST",
            headers: { authorization: `Basic ${Buffer.from("u:p").toString("base64")}` },
            body: new URLSearchParams({ urls: MAGNET, category: "tv" })
          }).then((r) => r.text())
        )
        assert.strictEqual(add, "Ok.")
        const id = IntakeId.make(`btih:${HASH}`)
        const now = yield* Clock.currentTimeMillis
        yield* halfDownloaded(tables, id, "dl_1")
        const downloading = yield* torrent(qbit)
        assert.deepStrictEqual(
          [downloading.state, downloading.progress, downloading.dlspeed, downloading.eta],
          ["downloading", 0.25, 65_536, 32]
        )
        assert.deepStrictEqual([downloading.amount_left, downloading.completed], [SIZE * 0.75, SIZE * 0.25])

        // The service has it; the mirror has copied 1 MiB of the file so far, at 256 KiB/s.
        yield* tables.update(id, ["sent"], { status: "completed", progress: 1, serviceCompletedAt: now }, now)
        yield* seedRemote([
          folder("f_tv", null, "tv"),
          remoteFile("f_1", "f_tv", "Show.S01E01.mkv", SIZE, "dl_1")
        ]).pipe(Effect.provideService(Store, store))
        yield* store.liveTransfers.publish({
          pid: process.pid,
          updatedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
          completed: 0,
          parked: 0,
          bytesPerSecond: 262_144,
          files: [
            { fileId: "f_1", path: "tv/Show.S01E01.mkv", size: SIZE, bytes: 1024 * 1024, bytesPerSecond: 262_144 }
          ],
          waitingForSpace: 0
        })
        const mirroring = yield* torrent(qbit)
        assert.deepStrictEqual(
          [mirroring.state, mirroring.progress, mirroring.dlspeed, mirroring.eta, mirroring.amount_left],
          ["downloading", 0.625, 262_144, 12, SIZE * 0.375]
        )
        const [item] = yield* intake.list({ ids: [id] })
        assert.deepStrictEqual([item?.progress, item?.rate, item?.etaSeconds], [0.625, 262_144, 12])
        const [line] = renderIntake(intakeStatus([item ?? assert.fail("no item")])).slice(1)
        assert.strictEqual(line, "  Show.S01E01.mkv (tv): mirroring 62%, 256.0 KiB/s, 00:12 left")
      }).pipe(Effect.scoped)
  )

  it.live("SABnzbd's queue: kbpersec, speed, timeleft, mb and mbleft, percentage of a job the service downloads", () =>
    Effect.gen(function* () {
      const { sab, tables } = yield* surfaces
      const nzb = `<nzb><file subject="s"><segments><segment bytes="${SIZE}" number="1">a@b</segment></segments></file></nzb>`
      const form = new FormData()
      form.append("name", new Blob([nzb]), "Film.2024.nzb")
      const added: unknown = yield* Effect.promise(() =>
        fetch(`${sab}/api?mode=addfile&cat=movies&output=json&apikey=${KEY}`, { method: "POST", body: form }).then(
          (r) => r.json()
        )
      )
      const nzoId =
        isRecord(added) && Array.isArray(added.nzo_ids) ? String(added.nzo_ids[0]) : assert.fail("no nzo_id")
      const before = yield* sabQueue(sab)
      const [slot0] = Array.isArray(before.slots) ? before.slots.filter(isRecord) : []
      assert.deepStrictEqual(
        [slot0?.mb, slot0?.mbleft, slot0?.timeleft],
        ["4.00", "4.00", "0:00:00"],
        "the NZB's size at once"
      )

      yield* halfDownloaded(tables, IntakeId.make(`sha256:${nzoId.slice("SABnzbd_nzo_".length)}`), "dl_2")
      const queue = yield* sabQueue(sab)
      const [slot] = Array.isArray(queue.slots) ? queue.slots.filter(isRecord) : []
      assert.deepStrictEqual(
        [queue.kbpersec, queue.speed, queue.timeleft, queue.mb, queue.mbleft, queue.status],
        ["64.00", "64 K", "0:00:48", "4.00", "3.00", "Downloading"]
      )
      assert.deepStrictEqual(
        [slot?.status, slot?.percentage, slot?.mb, slot?.mbleft, slot?.timeleft],
        ["Downloading", "25", "4.00", "3.00", "0:00:32"]
      )
    }).pipe(Effect.scoped)
  )
})
