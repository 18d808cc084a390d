/**
 * dlsync's qBittorrent API against a real qBittorrent, endpoint by endpoint: the same
 * torrents added stopped to both (a multi-file .torrent with a comment, a single-file private
 * one, a magnet with a tracker), then the same calls; status, media type, key set and each
 * key's JSON type must agree, up to the keys qBittorrent 5.0 added or dropped since the 4.5
 * Debian ships (qbittorrentVersions.ts: the version table, exact when the peer is 4.5).
 * Values are compared where both programs must give the same (sizes, file names, trackers,
 * magnet links, sort order, error texts). dlsync runs over the real intake and a real store.
 *
 * The differences dlsync keeps on purpose are asserted as such at the end (README,
 * "Differences kept").
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { QbittorrentServer } from "../../src/qbittorrent/QbittorrentServer.ts"
import { intakeOverStore } from "../intake/releaseStore.ts"
import { tempDir } from "../store/helpers.ts"
import { bencode } from "../support/torrentFixture.ts"
import { NOX, NOX_PASSWORD, NOX_USER, noxVersion, startNox } from "./qbittorrentNox.ts"
import { ADDED_IN_5_0, CALLS, REMOVED_IN_5_0 } from "./qbittorrentVersions.ts"
import { type Answer, compareShapes, isRecord, keyTypes, type QbitCall, qbitClient } from "./shapes.ts"

const VERSION = noxVersion()
const IS_4_5 = VERSION?.startsWith("v4.5") === true

const TRACKER = "http://127.0.0.1:9/announce"
const MULTI = bencode({
  announce: TRACKER,
  comment: "hello",
  "created by": "me",
  "creation date": 1_700_000_000,
  info: {
    name: "Show.S01",
    files: [
      { length: 30_000, path: ["a.mkv"] },
      { length: 100, path: ["Subs", "en.srt"] }
    ],
    "piece length": 16_384,
    pieces: Buffer.alloc(40, 1)
  }
})
const MULTI_HASH = "40a22a5e3457f64c2eda6e90d2a35d4f589b5dea"
const SINGLE = bencode({
  announce: TRACKER,
  info: { name: "Movie.mkv", length: 4096, "piece length": 16_384, pieces: Buffer.alloc(20, 1), private: 1 }
})
const SINGLE_HASH = "a48c2b577485da3552a06c43321171c212837aa5"
const MAGNET_HASH = "0123456789abcdef0123456789abcdef01234567"
const MAGNET = `magnet:?xt=urn:btih:${MAGNET_HASH}&dn=Mag.Name&tr=${encodeURIComponent(TRACKER)}`
const UNKNOWN = "f".repeat(40)

const upload = (name: string, content: Uint8Array, fields: Record<string, string>) => {
  const form = new FormData()
  form.append("torrents", new Blob([new Uint8Array(content)]), name)
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  return form
}

/** The same torrents, added stopped, in the same order. */
const seed = async (call: QbitCall) => {
  const answers = [
    await call(
      "POST",
      "torrents/add",
      upload("multi.torrent", MULTI, { stopped: "true", paused: "true", category: "newcat" })
    ),
    await call("POST", "torrents/add", upload("single.torrent", SINGLE, { stopped: "true", paused: "true" })),
    await call("POST", "torrents/add", { urls: MAGNET, stopped: "true", paused: "true" })
  ]
  for (const a of answers) if (a.text !== "Ok.") throw new Error(`add refused: ${a.status} ${a.text}`)
  // qBittorrent checks a torrent it adds before it shows it stopped: wait until all three are.
  for (;;) {
    const list: unknown = JSON.parse((await call("GET", "torrents/info")).text)
    const states = Array.isArray(list) ? list.filter(isRecord).map((t) => t.state) : []
    if (states.length === 3 && states.every((state) => state === "pausedDL" || state === "stoppedDL")) return
  }
}

const dlsync = Effect.gen(function* () {
  const root = tempDir()
  const layer = QbittorrentServer.layer({
    settings: {
      listen: { host: "127.0.0.1", port: 0 },
      username: NOX_USER,
      password: Redacted.make(NOX_PASSWORD),
      path_map: []
    },
    mirrorRoot: root
  }).pipe(Layer.provide(intakeOverStore(root)))
  return Context.get(yield* Layer.build(layer), QbittorrentServer).url
})

const both = Effect.gen(function* () {
  const [real, ours] = [yield* startNox, yield* dlsync]
  const calls = yield* Effect.promise(() =>
    Promise.all([qbitClient(real, NOX_USER, NOX_PASSWORD), qbitClient(ours, NOX_USER, NOX_PASSWORD)])
  )
  for (const call of calls) yield* Effect.promise(() => seed(call))
  const [r, d] = calls
  const ask = (method: "GET" | "POST", path: string, body?: Record<string, string> | FormData) =>
    Effect.promise(() => Promise.all([r(method, path, body), d(method, path, body)]))
  /** One GET each, with a path of each side's own. */
  const askEach = (real: string, ours: string) => Effect.promise(() => Promise.all([r("GET", real), d("GET", ours)]))
  return { ask, askEach }
})

/** A test over both programs, each with the same torrents added. */
const compare = (name: string, body: (sides: Effect.Success<typeof both>) => Effect.Effect<void>) =>
  it.live(name, () => Effect.scoped(Effect.flatMap(both, body)), 60_000)

const parse = (answer: Answer): unknown => JSON.parse(answer.text)

/** Status and media type agree, and so does the body's shape up to the keys named. */
const agree = (
  [real, ours]: readonly [Answer, Answer],
  call: string,
  versions: { readonly added?: ReadonlyArray<string>; readonly removed?: ReadonlyArray<string> } = {}
) => {
  assert.deepStrictEqual([ours.status, ours.type], [real.status, real.type], `${call}: status and type`)
  if (real.type !== "application/json") return
  const [reference, answer] = [parse(real), parse(ours)]
  // An empty list or object has no keys to compare.
  if (keyTypes(reference).size === 0 && keyTypes(answer).size === 0) return
  const difference = compareShapes(reference, answer)
  assert.deepStrictEqual(difference.types, [], `${call}: value types`)
  const [extra, missing] = [[...(versions.added ?? [])].sort(), [...(versions.removed ?? [])].sort()]
  if (IS_4_5) {
    assert.deepStrictEqual(difference.extra, extra, `${call}: keys 5.0 added`)
    assert.deepStrictEqual(difference.missing, missing, `${call}: keys 5.0 dropped`)
  } else {
    for (const key of difference.extra) assert.include(extra, key, `${call}: ${key} is a 5.0 key`)
    for (const key of difference.missing) assert.include(missing, key, `${call}: ${key} was dropped in 5.0`)
  }
}

/** The chosen fields of each object of a JSON list answer. */
const rows = (answer: Answer, pick: (o: Readonly<Record<string, unknown>>) => unknown): ReadonlyArray<unknown> => {
  const list = parse(answer)
  return Array.isArray(list) ? list.filter(isRecord).map(pick) : []
}

const textOf = ([real, ours]: readonly [Answer, Answer]) => [real.text.trim(), ours.text.trim()]

describe.skipIf(VERSION === undefined)(
  `qBittorrent conformance against a running ${NOX} ${VERSION ?? `(skipped: install the Debian package ${NOX})`}`,
  () => {
    compare("app, transfer and log: versions, build, preferences, interfaces, rates, the log", ({ ask }) =>
      Effect.gen(function* () {
        for (const path of ["app/version", "app/webapiVersion", "app/defaultSavePath", "transfer/speedLimitsMode"]) {
          agree(yield* ask("GET", path), path)
        }
        assert.deepStrictEqual(textOf(yield* ask("GET", "transfer/speedLimitsMode")), ["0", "0"])
        agree(yield* ask("GET", "app/buildInfo"), "app/buildInfo", { added: ADDED_IN_5_0.buildInfo })
        agree(yield* ask("GET", "app/preferences"), "app/preferences", {
          added: ADDED_IN_5_0.preferences,
          removed: REMOVED_IN_5_0.preferences
        })
        for (const path of ["app/networkInterfaceList", "transfer/info", "log/main", "log/main?last_known_id=-1"]) {
          agree(yield* ask("GET", path), path)
        }
        agree(yield* ask("POST", "app/setPreferences", { json: "{}" }), "app/setPreferences")
      })
    )

    compare(
      "torrents/info: keys, filters, sort, hashes; a stopped .torrent's size and a magnet's trackers",
      ({ ask }) =>
        Effect.gen(function* () {
          const info = yield* ask("GET", "torrents/info")
          agree(info, "torrents/info", { added: ADDED_IN_5_0.torrentInfo })
          const facts = (answer: Answer, hash: (h: unknown) => boolean) =>
            rows(answer, (t) => [t.hash, t.size, t.total_size, t.amount_left, t.magnet_uri, t.trackers_count])
              .filter((row) => Array.isArray(row) && hash(row[0]))
              .sort()
          const [real, ours] = info
          const torrentFile = (h: unknown) => h !== MAGNET_HASH
          assert.deepStrictEqual(facts(ours, torrentFile), facts(real, torrentFile), "size, magnet_uri, trackers")
          const magnet = (h: unknown) => h === MAGNET_HASH
          assert.deepStrictEqual(facts(ours, magnet), facts(real, magnet), "a magnet keeps its tr=")
          const names = (answer: Answer) => rows(answer, (t) => t.name)
          const sorted = yield* ask("GET", "torrents/info?sort=name")
          agree(sorted, "sort=name", { added: ADDED_IN_5_0.torrentInfo })
          assert.deepStrictEqual(names(sorted[1]), names(sorted[0]), "sorted as qBittorrent sorts")
          const unknownSort = yield* ask("GET", "torrents/info?sort=bogus")
          agree(unknownSort, "sort=bogus")
          assert.deepStrictEqual(textOf(unknownSort), ["'sort' parameter is invalid", "'sort' parameter is invalid"])
          const unknownFilter = yield* ask("GET", "torrents/info?filter=bogus")
          assert.deepStrictEqual(
            names(unknownFilter[1]).length,
            names(unknownFilter[0]).length,
            "an unknown filter is all"
          )
          for (const path of [
            "torrents/info?hashes=zz",
            `torrents/info?hashes=zz|${MULTI_HASH}`,
            "torrents/info?category=newcat"
          ]) {
            const answer = yield* ask("GET", path)
            agree(answer, path, { added: ADDED_IN_5_0.torrentInfo })
            assert.deepStrictEqual(names(answer[1]), names(answer[0]), path)
          }
        })
    )

    compare(
      "one torrent: properties, files, trackers, peers; a hash that names no torrent is 404, none is 400",
      ({ ask }) =>
        Effect.gen(function* () {
          for (const hash of [MULTI_HASH, SINGLE_HASH]) {
            const properties = yield* ask("GET", `torrents/properties?hash=${hash}`)
            agree(properties, "torrents/properties", { added: ADDED_IN_5_0.properties })
            const pick = (answer: Answer) => {
              const p = parse(answer)
              return isRecord(p)
                ? [p.total_size, p.pieces_num, p.piece_size, p.comment, p.created_by, p.creation_date, p.is_private]
                : []
            }
            assert.deepStrictEqual(pick(properties[1]), pick(properties[0]), `${hash}: from the .torrent`)
            const files = yield* ask("GET", `torrents/files?hash=${hash}`)
            agree(files, "torrents/files")
            const list = (answer: Answer) => rows(answer, (x) => [x.index, x.name, x.size, "is_seed" in x])
            assert.deepStrictEqual(
              list(files[1]),
              list(files[0]),
              `${hash}: files, names as qBittorrent's Original layout`
            )
            const trackers = yield* ask("GET", `torrents/trackers?hash=${hash}`)
            agree(trackers, "torrents/trackers")
            const urls = (answer: Answer) => rows(answer, (x) => [x.url, x.tier, x.status])
            assert.deepStrictEqual(urls(trackers[1]), urls(trackers[0]), `${hash}: trackers`)
            agree(yield* ask("GET", `sync/torrentPeers?hash=${hash}`), "sync/torrentPeers")
          }
          for (const read of ["properties", "files", "trackers"]) {
            for (const query of [`?hash=zz`, `?hash=${UNKNOWN}`, ""])
              agree(yield* ask("GET", `torrents/${read}${query}`), `${read}${query}`)
          }
          agree(yield* ask("GET", "sync/torrentPeers?hash=zz"), "torrentPeers?hash=zz")
        })
    )

    compare("sync/maindata: a full update, then only what changed since the rid the client holds", ({ ask, askEach }) =>
      Effect.gen(function* () {
        const full = yield* ask("GET", "sync/maindata")
        agree(full, "sync/maindata")
        const part = (answer: Answer, key: string, inner?: string) => {
          const m = parse(answer)
          const value = isRecord(m) ? m[key] : undefined
          return inner === undefined ? value : isRecord(value) ? value[inner] : undefined
        }
        for (const [key, inner, added] of [
          ["server_state", undefined, ADDED_IN_5_0.serverState],
          ["torrents", MULTI_HASH, ADDED_IN_5_0.torrentInfo],
          ["categories", "newcat", []]
        ] as const) {
          const pair = full.map((a) => ({ ...a, text: JSON.stringify(part(a, key, inner)) }))
          agree([pair[0] ?? full[0], pair[1] ?? full[1]], `maindata ${key}`, { added })
        }
        const rids = full.map((a) => Number(part(a, "rid")))
        const next = yield* askEach(`sync/maindata?rid=${rids[0]}`, `sync/maindata?rid=${rids[1]}`)
        // What a delta holds depends on what changed (free disk space may): compared by what it must say.
        assert.deepStrictEqual(
          next.map((a) => [a.status, a.type]),
          full.map((a) => [a.status, a.type])
        )
        for (const answer of next) {
          const m = parse(answer)
          assert.isTrue(
            isRecord(m) && m.full_update === undefined && m.rid === Number(part(answer, "rid")),
            answer.text
          )
          assert.isTrue(isRecord(m) && m.torrents === undefined && m.torrents_removed === undefined, "nothing changed")
        }
      })
    )

    compare(
      "actions and categories: empty 200s as text/plain, hashes skipped, conflicts, add without a source",
      ({ ask }) =>
        Effect.gen(function* () {
          for (const [path, body] of [
            ["torrents/pause", { hashes: "zz" }],
            [
              "torrents/setShareLimits",
              { hashes: "zz", ratioLimit: "-2", seedingTimeLimit: "-2", inactiveSeedingTimeLimit: "-2" }
            ],
            ["torrents/topPrio", { hashes: UNKNOWN }],
            ["torrents/addTags", { hashes: "zz", tags: "x" }],
            ["torrents/delete", { hashes: "zz", deleteFiles: "false" }],
            ["torrents/createCategory", { category: "newcat" }],
            ["torrents/createCategory", { category: "" }],
            ["torrents/editCategory", { category: "nosuch", savePath: "" }],
            ["torrents/setCategory", { hashes: MULTI_HASH, category: "nosuch" }],
            ["torrents/setCategory", { category: "newcat" }],
            ["torrents/add", { urls: "" }],
            ["torrents/add", { urls: "garbage" }]
          ] as const) {
            const answer = yield* ask("POST", path, body)
            agree(answer, `${path} ${JSON.stringify(body)}`)
            // A 400's text: qBittorrent says "Bad Request", dlsync names the parameter.
            if (answer[0].status !== 400 && answer[0].text !== "") {
              assert.deepStrictEqual(textOf(answer)[1], textOf(answer)[0], `${path}: its text`)
            }
          }
          const broken = yield* ask("POST", "torrents/add", upload("broken.torrent", new TextEncoder().encode("x"), {}))
          agree(broken, "add a file that is not a torrent")
          assert.deepStrictEqual(textOf(broken)[1], textOf(broken)[0])
          agree(yield* ask("GET", "torrents/pause?hashes=zz"), "a change over GET")
          for (const path of IS_4_5 ? CALLS.onlyIn5_0 : CALLS.onlyIn4_5) {
            const [real, ours] = yield* ask(
              path === "torrents/count" ? "GET" : "POST",
              path,
              path === "torrents/count" ? undefined : { hashes: "zz" }
            )
            assert.deepStrictEqual([real.status, ours.status], [404, 200], `${path}: a call of the other version, kept`)
          }
        })
    )

    compare(
      "differences kept on purpose: an add of a torrent present is Ok., delete without deleteFiles is taken, '..' is no category",
      ({ ask }) =>
        Effect.gen(function* () {
          const again = yield* ask("POST", "torrents/add", { urls: MAGNET })
          assert.deepStrictEqual(textOf(again), ["Fails.", "Ok."])
          const [real, ours] = yield* ask("POST", "torrents/delete", { hashes: UNKNOWN })
          assert.deepStrictEqual([real.status, ours.status], [400, 200])
          const outside = yield* ask("POST", "torrents/createCategory", { category: "../outside" })
          assert.strictEqual(outside[1].status, 400, "a category is a folder inside the mirror root")
          assert.notStrictEqual(outside[0].status, 400, "qBittorrent takes it")
        })
    )
  }
)
