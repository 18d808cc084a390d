/**
 * dlsync's SABnzbd API against SABnzbd's own answer shapes (sabnzbdShapes.ts, read from
 * api.py at the commit it names): every mode the tools call, its key set exactly and each
 * value's JSON type, as JSON and as XML (`output=xml`); then the npm client sabnzbd-api
 * driving it. dlsync runs over the real intake and a real store; a failed job is failed in
 * the store as the runner fails one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { Client } from "sabnzbd-api"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { intakeOverStore } from "../intake/releaseStore.ts"
import { tempDir } from "../store/helpers.ts"
import {
  FILE,
  HISTORY,
  HISTORY_SLOT,
  QUEUE,
  QUEUE_SLOT,
  SABNZBD_SOURCE,
  SERVER_STATS,
  type Shape,
  STATUS,
  STATUS_DASHBOARD
} from "./sabnzbdShapes.ts"
import { isRecord, typeOf } from "./shapes.ts"

const KEY = "0123456789abcdef0123456789abcdef"
const nzb = (subject: string, bytes: ReadonlyArray<number>) =>
  `<?xml version="1.0" encoding="UTF-8"?>
<nzb xmlns="http://www.newzbin.com/DTD/2003/nzb"><file poster="p" date="1" subject="${subject}"><groups><group>a.b</group></groups><segments>${bytes
    .map((b, i) => `<segment bytes="${b}" number="${i + 1}">${subject}${i}@x</segment>`)
    .join("")}</segments></file></nzb>`

/** The surface over the real intake, with one job queued (2 MiB by its NZB) and one failed. */
const surface = Effect.gen(function* () {
  const root = tempDir()
  const layer = SabnzbdServer.layer({
    settings: {
      listen: { host: "127.0.0.1", port: 0 },
      apiKey: Option.some(Redacted.make(KEY)),
      pathMap: [],
      categories: ["tv", "movies"]
    },
    root
  }).pipe(Layer.provideMerge(intakeOverStore(root)))
  const context = yield* Layer.build(layer)
  const base = Context.get(context, SabnzbdServer).url ?? assert.fail("the surface is off")
  const addfile = (title: string, content: string, params: Record<string, string>) =>
    Effect.promise(async () => {
      const form = new FormData()
      form.append("name", new Blob([content], { type: "application/x-nzb" }), `${title}.nzb`)
      const url = apiUrl(base, "addfile", params)
      const answer = await (await fetch(url, { method: "POST", body: form })).json()
      return isRecord(answer) && Array.isArray(answer.nzo_ids) ? String(answer.nzo_ids[0]) : assert.fail("no nzo_id")
    })
  const queued = yield* addfile("Show.S01E01", nzb("a", [1024 * 1024, 1024 * 1024]), { cat: "tv", priority: "1" })
  const failed = yield* addfile("Show.S01E02", nzb("b", [10]), { cat: "tv" })
  const tables = Context.get(context, IntakeTables)
  const failedId = IntakeId.make(`sha256:${failed.slice("SABnzbd_nzo_".length)}`)
  assert.isTrue(
    yield* tables.update(
      failedId,
      ["new"],
      { phase: "failed", reason: "the service failed it" },
      yield* Clock.currentTimeMillis
    )
  )
  return { base, queued, failed }
})

const apiUrl = (base: string, mode: string, params: Record<string, string> = {}) => {
  const url = new URL("/api", base)
  for (const [k, v] of Object.entries({ mode, ...params, apikey: KEY })) url.searchParams.set(k, v)
  return url
}

const call = (base: string, mode: string, params: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(apiUrl(base, mode, { output: "json", ...params }))
    const body: unknown = await response.json()
    return { type: response.headers.get("content-type") ?? "", body }
  })

const xml = (base: string, mode: string, params: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(apiUrl(base, mode, { output: "xml", ...params }))
    return { type: response.headers.get("content-type") ?? "", text: await response.text() }
  })

/** The keys are exactly the shape's, each of a type it allows. */
const conforms = (value: unknown, shape: Shape, what: string) => {
  assert.isTrue(isRecord(value), `${what} is an object`)
  if (!isRecord(value)) return
  assert.deepStrictEqual(Object.keys(value).sort(), Object.keys(shape).sort(), `${what}: keys (${SABNZBD_SOURCE})`)
  for (const [key, allowed] of Object.entries(shape)) {
    const types: ReadonlyArray<string> = typeof allowed === "string" ? [allowed] : allowed
    assert.include(types, typeOf(value[key]), `${what}.${key}`)
  }
}

const field = (value: unknown, ...path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>(
    (v, k) => (Array.isArray(v) && typeof k === "number" ? v[k] : isRecord(v) ? v[String(k)] : undefined),
    value
  )

const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

describe(`SABnzbd conformance: dlsync's answers against ${SABNZBD_SOURCE}`, () => {
  it.live("queue, history, status, files, stats: every key and its type, as api.py builds them", () =>
    Effect.gen(function* () {
      const { base, queued, failed } = yield* surface
      const queue = yield* call(base, "queue", { start: "0", limit: "0" })
      assert.strictEqual(queue.type, "application/json;charset=UTF-8")
      conforms(field(queue.body, "queue"), QUEUE, "queue")
      conforms(field(queue.body, "queue", "slots", 0), QUEUE_SLOT, "queue slot")
      // Before the service knows a size, the NZB's own (two segments of 1 MiB); the priority the app gave.
      assert.deepStrictEqual(
        ["mb", "mbleft", "percentage", "priority", "nzo_id"].map((k) => field(queue.body, "queue", "slots", 0, k)),
        ["2.00", "2.00", "0", "High", queued]
      )
      const history = yield* call(base, "history", { start: "0", limit: "60" })
      conforms(field(history.body, "history"), HISTORY, "history")
      conforms(field(history.body, "history", "slots", 0), HISTORY_SLOT, "history slot")
      assert.deepStrictEqual(
        ["nzo_id", "status", "fail_message", "retry"].map((k) => field(history.body, "history", "slots", 0, k)),
        [failed, "Failed", "the service failed it", true]
      )
      const update = field(history.body, "history", "last_history_update")
      const unchanged = yield* call(base, "history", { last_history_update: String(update) })
      assert.deepStrictEqual(unchanged.body, { history: false }, "nothing changed since")

      conforms(field((yield* call(base, "fullstatus", { skip_dashboard: "1" })).body, "status"), STATUS, "fullstatus")
      conforms(field((yield* call(base, "status")).body, "status"), STATUS_DASHBOARD, "status")
      const files = yield* call(base, "get_files", { value: queued })
      assert.isArray(field(files.body, "files"))
      for (const file of list(field(files.body, "files"))) conforms(file, FILE, "file")
      conforms((yield* call(base, "server_stats")).body, SERVER_STATS, "server_stats")
      assert.deepStrictEqual((yield* call(base, "warnings")).body, { warnings: [] })
      assert.deepStrictEqual((yield* call(base, "get_scripts")).body, { scripts: ["None"] })
      assert.deepStrictEqual((yield* call(base, "get_cats")).body, { categories: ["*", "movies", "tv"] })
    }).pipe(Effect.scoped)
  )

  it.live(
    "the modes that act: priority, switch, change_cat, config, retry, retry_all; errors as api.py words them",
    () =>
      Effect.gen(function* () {
        const { base, queued, failed } = yield* surface
        assert.deepStrictEqual((yield* call(base, "queue", { name: "priority", value: queued, value2: "2" })).body, {
          position: 0
        })
        assert.strictEqual(field((yield* call(base, "queue")).body, "queue", "slots", 0, "priority"), "Force")
        assert.deepStrictEqual((yield* call(base, "queue", { name: "priority", value: queued, value2: "x" })).body, {
          status: false,
          error: "expects integer value"
        })
        assert.deepStrictEqual((yield* call(base, "switch", { value: queued, value2: failed })).body, {
          result: { position: 0, priority: 2 }
        })
        assert.deepStrictEqual((yield* call(base, "change_cat", { value: queued, value2: "movies" })).body, {
          status: true
        })
        assert.strictEqual(field((yield* call(base, "queue")).body, "queue", "slots", 0, "cat"), "movies")
        assert.deepStrictEqual((yield* call(base, "change_cat", { value: queued })).body, {
          status: false,
          error: "expects one parameter"
        })
        assert.deepStrictEqual((yield* call(base, "config", { name: "speedlimit", value: "50" })).body, {
          status: true
        })
        assert.strictEqual(field((yield* call(base, "queue")).body, "queue", "speedlimit"), "50")
        assert.deepStrictEqual((yield* call(base, "config", { name: "set_pause", value: "5" })).body, { status: true })
        assert.deepStrictEqual((yield* call(base, "config", { name: "set_apikey" })).body, {
          status: false,
          error: "not implemented"
        })
        assert.deepStrictEqual((yield* call(base, "retry", { value: queued })).body, {
          status: false,
          error: "item does not exist"
        })
        const again = yield* call(base, "retry", { value: failed })
        assert.deepStrictEqual(again.body, { status: true, nzo_id: failed }, "sent again under its identity")
        assert.deepStrictEqual(
          list(field((yield* call(base, "queue")).body, "queue", "slots")).map((s) => field(s, "nzo_id")),
          [queued, failed]
        )
        assert.deepStrictEqual((yield* call(base, "retry_all")).body, { status: [] }, "nothing failed now")
        const log = yield* Effect.promise(() => fetch(apiUrl(base, "showlog")))
        assert.strictEqual(log.headers.get("content-type"), "application/x-download;charset=utf-8")
        assert.strictEqual(log.headers.get("content-disposition"), 'attachment;filename="sabnzbd.log"')
        assert.include(yield* Effect.promise(() => log.text()), "SABnzbd version: ")
      }).pipe(Effect.scoped)
  )

  it.live("output=xml answers XML as SABnzbd's XmlOutputFactory writes it", () =>
    Effect.gen(function* () {
      const { base, queued } = yield* surface
      const version = yield* xml(base, "version")
      assert.strictEqual(version.type, "text/xml")
      assert.match(version.text, /^<\?xml version="1\.0" encoding="UTF-8" \?>\n<version>\d+\.\d+\.\d+<\/version>\n\n$/)
      const cats = yield* xml(base, "get_cats")
      assert.include(cats.text, "<categories><category>*</category>\n<category>movies</category>\n")
      const queue = yield* xml(base, "queue")
      assert.include(queue.text, `<queue><version>`)
      assert.include(queue.text, `<slots><slot><index>0</index>\n<nzo_id>${queued}</nzo_id>\n`)
      assert.include(queue.text, "<paused>False</paused>\n")
      assert.include(queue.text, "<finishaction></finishaction>\n")
      const wrongKey = new URL("/api?mode=queue&output=xml&apikey=wrong", base)
      const refused = yield* Effect.promise(async () => (await fetch(wrongKey)).text())
      assert.include(refused, "<result><status>False</status>\n<error>API Key Incorrect</error>\n</result>")
      assert.include((yield* xml(base, "pause")).text, "<result><status>True</status>\n</result>")
    }).pipe(Effect.scoped)
  )

  it.live("sabnzbd-api (npm) drives it: queue, history, status, getFiles, changeCat; warnings as against SABnzbd", () =>
    Effect.gen(function* () {
      const { base, queued, failed } = yield* surface
      const client = new Client(base, KEY)
      const queue = yield* Effect.promise(() => client.queue())
      assert.deepStrictEqual(
        queue.slots.map((s) => [s.nzo_id, s.mb, s.priority]),
        [[queued, "2.00", "High"]]
      )
      const history = yield* Effect.promise(() => client.history())
      assert.deepStrictEqual(
        history.slots.map((s) => [s.nzo_id, s.status]),
        [[failed, "Failed"]]
      )
      const status = yield* Effect.promise(() => client.status())
      assert.isString(status.completedir)
      assert.isArray(yield* Effect.promise(() => client.getFiles(queued)))
      assert.deepStrictEqual(yield* Effect.promise(() => client.changeCat(queued, "movies")), { status: true })
      // sabnzbd-api 1.5.0 iterates the whole answer, not its "warnings" list, so it throws on
      // SABnzbd's own {"warnings": [...]} (api.py report(keyword="warnings")) as on dlsync's.
      const warnings = yield* Effect.flip(Effect.tryPromise(() => client.warnings()))
      assert.include(String(warnings.cause), "is not iterable")
    }).pipe(Effect.scoped)
  )
})
