/**
 * Downloads, selections and the cache check through the client: POST /downloads (201
 * download or 200 selection), POST /downloads/upload (multipart .torrent / .nzb),
 * GET /downloads (client_reference, paging), GET / DELETE /downloads/{id}, cancel, retry,
 * GET /download-selections/{id} and choices (stages, new ids), POST /cache/check.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import type { DownloadOutcome } from "../../src/api/schemas/downloads.ts"
import {
  control,
  did,
  Emulator,
  expectReason,
  fid,
  freshUser,
  logMark,
  requestsSince,
  sid,
  withClient
} from "./harness.ts"

const HASH = "0123456789abcdef0123456789abcdef01234567"
const magnet = (name: string, hash = HASH) => `magnet:?xt=urn:btih:${hash}&dn=${encodeURIComponent(name)}`

/** Makes the download lifecycle move only when a test moves it (POST /_control/downloads/timings). */
const downloadsOf = control("/downloads/timings", {
  processing_ms: 3_600_000,
  downloading_ms: 3_600_000,
  finalizing_ms: 3_600_000
})

/** Runs a download to its end through the control API (POST /_control/downloads/{id}/complete). */
const complete = (id: string) => control(`/downloads/${encodeURIComponent(id)}/complete`)

const asDownload = (outcome: DownloadOutcome) => {
  assert.strictEqual(outcome.kind, "download")
  if (outcome.kind !== "download") throw new Error("not a download")
  return outcome.download
}

const asSelection = (outcome: DownloadOutcome) => {
  assert.strictEqual(outcome.kind, "selection")
  if (outcome.kind !== "selection") throw new Error("not a selection")
  return outcome.selection
}

/** A minimal bencoded torrent with the given files. */
const torrent = (name: string, files: ReadonlyArray<readonly [string, number]>): Uint8Array => {
  const str = (s: string) => `${Buffer.byteLength(s)}:${s}`
  const list = files.map(([path, length]) => `d6:lengthi${length}e4:pathl${str(path)}ee`).join("")
  return Buffer.from(
    `d8:announce${str("https://tracker.invalid/announce")}4:infod5:filesl${list}e4:name${str(name)}12:piece lengthi16384e6:pieces0:ee`
  )
}

layer(Emulator.layer())("downloads", (it) => {
  it.effect(
    "POST /downloads from a URL: 201 download (accepted, not finished); GET; complete → file_id and files",
    () =>
      Effect.gen(function* () {
        yield* downloadsOf
        const user = yield* freshUser
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const mark = yield* logMark
            const created = asDownload(
              yield* c.downloads.create({
                url: "https://files.example.com/pub/Big.Buck.Bunny.mkv",
                clientReference: "ref-1",
                directory: "Movies/New"
              })
            )
            assert.strictEqual((yield* requestsSince(mark)).at(-1)?.status, 201)
            assert.strictEqual(created.attempt, 1)
            assert.strictEqual(created.client_reference, "ref-1")
            assert.notStrictEqual(created.status, "completed")
            assert.isTrue(created.can_cancel)
            assert.isFalse(created.can_retry)
            const got = yield* c.downloads.get(created.id)
            assert.strictEqual(got.id, created.id)
            yield* complete(created.id)
            const done = yield* c.downloads.get(created.id)
            assert.strictEqual(done.status, "completed")
            assert.isFalse(done.can_cancel)
            assert.isString(done.file_id)
            const file = yield* c.files.get(fid(done.file_id ?? ""))
            assert.strictEqual(file.name, "Big.Buck.Bunny.mkv")
            assert.strictEqual(file.download_id, created.id)
            const listed = yield* c.files.list({ downloadId: created.id })
            assert.deepStrictEqual(
              listed.items.map((i) => i.id),
              [file.id]
            )
            // Under `directory`.
            const parent = yield* c.files.get(fid(file.parent_id ?? ""))
            assert.strictEqual(parent.name, "New")
            yield* expectReason(c.downloads.cancel(created.id), "Conflict", 409)
            // Deleting the download record leaves its files.
            yield* c.downloads.delete(created.id)
            yield* expectReason(c.downloads.get(created.id), "NotFound", 404)
            assert.strictEqual((yield* c.files.get(file.id)).id, file.id)
          })
        )
      })
  )

  it.effect("GET /downloads: newest first, cursor pages, client_reference matching (several share one)", () =>
    Effect.gen(function* () {
      yield* downloadsOf
      const user = yield* freshUser
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const ids: Array<string> = []
          for (const [n, ref] of [
            [1, "batch"],
            [2, "other"],
            [3, "batch"]
          ] as const) {
            ids.push(
              asDownload(yield* c.downloads.create({ url: `https://x.example/f${n}.bin`, clientReference: ref })).id
            )
          }
          const all = yield* Stream.runCollect(c.downloads.listPages({ limit: 2 }))
          assert.deepStrictEqual(
            all.map((p) => p.items.length),
            [2, 1]
          )
          assert.deepStrictEqual(
            all.flatMap((p) => p.items.map((d) => d.id)),
            [...ids].reverse()
          )
          const batch = yield* c.downloads.list({ clientReference: "batch" })
          assert.deepStrictEqual(
            batch.items.map((d) => d.id),
            [ids[2], ids[0]]
          )
          assert.isFalse(batch.hasMore)
        })
      )
    })
  )

  it.effect(
    "cancel stops it (the record stays), retry starts attempt 2 with the same id, delete removes the record",
    () =>
      Effect.gen(function* () {
        yield* downloadsOf
        const user = yield* freshUser
        yield* withClient(user.accessToken, (c) =>
          Effect.gen(function* () {
            const d = asDownload(yield* c.downloads.create({ magnet: magnet("Some Show") }))
            yield* expectReason(c.downloads.retry(d.id), "Conflict", 409)
            const canceled = Option.getOrThrow(yield* c.downloads.cancel(d.id))
            assert.strictEqual(canceled.status, "canceled")
            assert.isFalse(canceled.can_cancel)
            assert.isTrue(canceled.can_retry)
            assert.strictEqual((yield* c.downloads.get(d.id)).status, "canceled")
            const retried = Option.getOrThrow(yield* c.downloads.retry(d.id))
            assert.strictEqual(retried.id, d.id)
            assert.strictEqual(retried.attempt, 2)
            assert.isTrue(retried.can_cancel)
            yield* c.downloads.delete(d.id)
            yield* expectReason(c.downloads.get(d.id), "NotFound", 404)
            yield* expectReason(c.downloads.delete(d.id), "NotFound", 404)
            yield* expectReason(c.downloads.cancel(did("dl_unknown")), "NotFound", 404)
          })
        )
      })
  )

  it.effect("another user's download is 404", () =>
    Effect.gen(function* () {
      yield* downloadsOf
      const owner = yield* freshUser
      const stranger = yield* freshUser
      const d = asDownload(
        yield* withClient(owner.apiKey, (c) => c.downloads.create({ url: "https://x.example/mine.bin" }))
      )
      yield* expectReason(
        withClient(stranger.apiKey, (c) => c.downloads.get(d.id)),
        "NotFound",
        404
      )
    })
  )

  it.effect(
    "a source that needs a choice: 200 selection; GET the selection; choices lead through stages to a 201 download",
    () =>
      Effect.gen(function* () {
        yield* downloadsOf
        const user = yield* freshUser
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const mark = yield* logMark
            const first = asSelection(
              yield* c.downloads.create({ magnet: magnet("Film stages", HASH.replace("0", "f")) })
            )
            assert.strictEqual((yield* requestsSince(mark)).at(-1)?.status, 200)
            assert.isAbove(Date.parse(first.expires_at ?? ""), (yield* Emulator).state.clock.nowMs())
            assert.isTrue(first.items.length > 0 && first.items.every((i) => i.selectable))
            assert.deepStrictEqual(yield* c.selections.get(first.id), first)
            const quality = first.items[0]?.item_id ?? ""
            const second = asSelection(yield* c.selections.choose(first.id, quality))
            assert.notStrictEqual(second.id, first.id)
            const root = second.items.find((i) => !i.selectable)
            const leaf = second.items.find((i) => i.selectable)
            assert.isDefined(root)
            assert.strictEqual(leaf?.parent_id, root?.item_id)
            // An item that is not selectable is refused, with the field named.
            const refused = yield* expectReason(c.selections.choose(second.id, root?.item_id ?? ""), "Validation", 422)
            assert.isDefined(refused.fields.item_id)
            const mark2 = yield* logMark
            const download = asDownload(yield* c.selections.choose(second.id, leaf?.item_id ?? ""))
            assert.strictEqual((yield* requestsSince(mark2)).at(-1)?.status, 201)
            assert.strictEqual(download.attempt, 1)
            // A stage once answered cannot be answered again.
            yield* expectReason(c.selections.choose(second.id, leaf?.item_id ?? ""), "Conflict", 409)
            yield* expectReason(c.selections.get(sid("sel_unknown")), "NotFound", 404)
          })
        )
      })
  )

  it.effect("a choice after expires_at is refused", () =>
    Effect.gen(function* () {
      yield* downloadsOf
      const e = yield* Emulator
      const user = yield* freshUser
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const selection = asSelection(yield* c.downloads.create({ url: "https://multi.example.com/show.mkv" }))
          assert.strictEqual(selection.items.length, 3)
          e.control.advanceClock(Date.parse(selection.expires_at ?? "") - e.state.clock.nowMs() + 1_000)
          yield* expectReason(c.selections.choose(selection.id, selection.items[0]?.item_id ?? ""), "Conflict", 409)
        })
      )
    })
  )

  it.effect("POST /downloads/upload: multipart .torrent and .nzb become downloads; other files are 415", () =>
    Effect.gen(function* () {
      yield* downloadsOf
      const user = yield* freshUser
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const fromTorrent = asDownload(
            yield* c.downloads.upload({
              fileName: "linux.torrent",
              content: torrent("Linux ISO", [
                ["disc1.iso", 4096],
                ["README.txt", 100]
              ]),
              contentType: "application/x-bittorrent",
              clientReference: "upload-ref",
              directory: "ISOs"
            })
          )
          assert.strictEqual(fromTorrent.client_reference, "upload-ref")
          yield* complete(fromTorrent.id)
          const done = yield* c.downloads.get(fromTorrent.id)
          const folder = yield* c.files.get(fid(done.file_id ?? ""))
          assert.strictEqual(folder.name, "Linux ISO")
          const inside = yield* c.files.list({ parentId: folder.id })
          assert.deepStrictEqual(inside.items.map((i) => i.name).sort(), ["README.txt", "disc1.iso"])
          // A completed torrent can be seeding; download_id lists only the download's files.
          assert.strictEqual(done.activity, "seeding")
          const own = yield* c.files.list({ downloadId: fromTorrent.id })
          assert.deepStrictEqual(
            own.items.map((i) => i.type),
            ["file", "file"]
          )
          const fromNzb = asDownload(
            yield* c.downloads.upload({
              fileName: "show.nzb",
              content: Buffer.from(
                '<?xml version="1.0"?><nzb><file subject="&quot;show.mkv&quot; yEnc (1/1)"></file></nzb>'
              ),
              contentType: "application/x-nzb"
            })
          )
          assert.strictEqual(fromNzb.attempt, 1)
          const unsupported = yield* expectReason(
            c.downloads.upload({ fileName: "notes.txt", content: Buffer.from("hello"), contentType: "text/plain" }),
            "Validation",
            415
          )
          assert.isDefined(unsupported.code)
        })
      )
    })
  )

  it.effect(
    "creation input is checked: the client refuses bad sources and non-https webhooks; the server names fields",
    () =>
      Effect.gen(function* () {
        yield* downloadsOf
        const user = yield* freshUser
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const mark = yield* logMark
            assert.strictEqual(
              (yield* expectReason(c.downloads.create({ url: "ftp://x.example/a" }), "ClientValidation")).field,
              "url"
            )
            assert.strictEqual(
              (yield* expectReason(
                c.downloads.create({ url: "https://x.example/a", webhookUrl: "http://hook.example/" }),
                "ClientValidation"
              )).field,
              "webhook_url"
            )
            assert.strictEqual((yield* requestsSince(mark)).length, 0)
            // A magnet without a usable info hash passes the client's shape check; the server refuses it.
            const refused = yield* expectReason(c.downloads.create({ magnet: "magnet:?dn=nothing" }), "Validation", 422)
            assert.strictEqual(refused.code, "validation_failed")
            assert.isDefined(refused.fields.magnet)
          })
        )
      })
  )

  it.effect("402 account restrictions: no daily download left, or no credit for a retry, is PaymentRequired", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      yield* downloadsOf
      const user = yield* freshUser
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const d = asDownload(yield* c.downloads.create({ url: "https://x.example/one.bin" }))
          yield* c.downloads.cancel(d.id)
          const limits = (yield* c.account.get).limits
          e.control.updateAccount(
            {
              creditsRemaining: 0,
              limits: {
                ...limits,
                daily_downloads: { limit: 1, remaining: 0, resets_at: "2030-01-01T00:00:00.000000Z" }
              }
            },
            user.userId
          )
          yield* expectReason(c.downloads.create({ url: "https://x.example/two.bin" }), "PaymentRequired", 402)
          yield* expectReason(c.downloads.retry(d.id), "PaymentRequired", 402)
          assert.strictEqual((yield* c.downloads.get(d.id)).attempt, 1)
        })
      )
    })
  )

  it.effect(
    "POST /cache/check: read-only answer per hash; duplicates refused before sending; no download created",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        yield* downloadsOf
        const user = yield* freshUser
        const cached = "a".repeat(40)
        const missing = "b".repeat(40)
        e.control.setCached([cached], true)
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const answer = yield* c.cache.check([cached, missing])
            assert.deepStrictEqual(answer, [
              { hash: cached, cached: true },
              { hash: missing, cached: false }
            ])
            const mark = yield* logMark
            const dup = yield* expectReason(c.cache.check([cached, cached.toUpperCase()]), "ClientValidation")
            assert.strictEqual(dup.field, "hashes[1]")
            assert.strictEqual((yield* requestsSince(mark)).length, 0)
            assert.deepStrictEqual((yield* c.downloads.list()).items, [])
            assert.strictEqual((yield* c.account.get).credits.remaining, 1000)
          })
        )
      })
  )
})
