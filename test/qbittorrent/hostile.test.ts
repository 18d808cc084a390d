/**
 * The qBittorrent API under bad input: every wrong request gets one clear answer (400, 403,
 * 404, 405, 413, 415) and changes nothing; the intake sees only what it should.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Intake, IntakeError } from "../../src/intake/Intake.ts"
import { QbittorrentServer } from "../../src/qbittorrent/QbittorrentServer.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"
import { makeTorrent } from "../support/torrentFixture.ts"
import { PASSWORD, startQbit, USERNAME } from "./harness.ts"

const BASIC = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64")}`

const send = (
  url: string,
  method: string,
  path: string,
  body?: URLSearchParams | FormData | string,
  headers: Record<string, string> = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/api/v2/${path}`, {
      method,
      headers: { authorization: BASIC, ...headers },
      ...(body === undefined ? {} : { body })
    })
    return { status: response.status, body: await response.text() }
  })

const post = (url: string, path: string, fields: Record<string, string>) =>
  send(url, "POST", path, new URLSearchParams(fields))

describe("qBittorrent API: hostile and mistaken input", () => {
  it.effect("no credentials: 403 everywhere but auth/login, the version probe included (never 401/404)", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      for (const path of ["app/webapiVersion", "app/version", "torrents/info", "torrents/add", "nonexistent/x"]) {
        const response = yield* Effect.promise(() => fetch(`${url}/api/v2/${path}`))
        assert.strictEqual(response.status, 403, path)
      }
    }).pipe(Effect.scoped)
  )

  it.effect("any Host is answered, as qBittorrent answers it: the credentials are the gate", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      const port = new URL(url).port
      const asHost = (host: string, headers: Record<string, string> = {}) =>
        rawRequest(url, { path: "/api/v2/app/webapiVersion", headers: { host, ...headers } })
      for (const host of [`dlsync:${port}`, `evil.example:${port}`, "nas.lan"]) {
        assert.strictEqual((yield* asHost(host)).status, 403, `${host}, not signed in`)
        const signedIn = yield* asHost(host, { authorization: BASIC })
        assert.deepStrictEqual([signedIn.status, signedIn.body], [200, "2.11.2"], host)
      }
    }).pipe(Effect.scoped)
  )

  it.effect("unknown calls are 404, changing calls over GET are 405, an unknown body type is 415", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      assert.strictEqual((yield* send(url, "GET", "torrents/nothing")).status, 404)
      assert.strictEqual((yield* send(url, "GET", "torrents/delete?hashes=all")).status, 405)
      const json = yield* send(url, "POST", "torrents/add", '{"urls":"x"}', { "content-type": "application/json" })
      assert.strictEqual(json.status, 415)
      assert.include(json.body, "application/x-www-form-urlencoded")
    }).pipe(Effect.scoped)
  )

  it.effect("malformed multipart is a 400 naming it", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const response = yield* send(url, "POST", "torrents/add", "--x\r\nnot a part at all", {
        "content-type": "multipart/form-data; boundary=zzz"
      })
      assert.strictEqual(response.status, 400)
      assert.include(response.body, "malformed multipart/form-data")
      assert.lengthOf(yield* control.items, 0)
    }).pipe(Effect.scoped)
  )

  it.effect("long values (over 1024 bytes) in multipart and url-encoded bodies arrive whole", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const tail = "&tr=".concat("udp%3A%2F%2Ft.example%3A1%2Fa".repeat(60))
      const magnet = (hash: string) => `magnet:?xt=urn:btih:${hash}&dn=Long${tail}`
      const form = new FormData()
      form.append("urls", magnet("a".repeat(40)))
      form.append("category", "tv")
      assert.strictEqual((yield* send(url, "POST", "torrents/add", form)).body, "Ok.")
      assert.strictEqual((yield* post(url, "torrents/add", { urls: magnet("b".repeat(40)) })).body, "Ok.")
      assert.deepStrictEqual(
        (yield* control.items).map((i) => i.name),
        ["Long", "Long"]
      )
    }).pipe(Effect.scoped)
  )

  it.effect(
    "hashes as qBittorrent reads them: a malformed or unknown one names no torrent (404 for one-torrent reads, skipped by actions and info)",
    () =>
      Effect.gen(function* () {
        const { url, control } = yield* startQbit()
        const unknown = "f".repeat(40)
        for (const read of ["properties", "files", "trackers"]) {
          assert.strictEqual((yield* send(url, "GET", `torrents/${read}?hash=../../etc/passwd`)).status, 404, read)
          assert.strictEqual((yield* send(url, "GET", `torrents/${read}?hash=${unknown}`)).status, 404, read)
          assert.strictEqual((yield* send(url, "GET", `torrents/${read}`)).status, 400, read)
        }
        assert.strictEqual((yield* send(url, "GET", `sync/torrentPeers?hash=${unknown}`)).status, 404)
        const info = yield* send(url, "GET", "torrents/info?hashes=zz|yy")
        assert.deepStrictEqual([info.status, info.body], [200, "[]"])
        assert.strictEqual((yield* post(url, "torrents/delete", { hashes: "nothex", deleteFiles: "true" })).status, 200)
        assert.strictEqual((yield* post(url, "torrents/delete", { hashes: unknown, deleteFiles: "true" })).status, 200)
        assert.strictEqual((yield* post(url, "torrents/delete", {})).status, 400)
        assert.strictEqual((yield* post(url, "torrents/stop", { hashes: "nothex" })).status, 200)
        assert.deepStrictEqual(
          (yield* control.calls).filter((c) => c.method === "remove" || c.method === "pause"),
          [],
          "nothing reached the intake"
        )
        const filter = yield* send(url, "GET", "torrents/info?filter=everything")
        assert.deepStrictEqual([filter.status, filter.body], [200, "[]"])
      }).pipe(Effect.scoped)
  )

  it.effect(
    "names of Object's own members are nothing special: an unknown filter lists all, an unknown call is 404",
    () =>
      Effect.gen(function* () {
        const { url } = yield* startQbit()
        assert.strictEqual(
          (yield* post(url, "torrents/add", { urls: `magnet:?xt=urn:btih:${"a".repeat(40)}` })).body,
          "Ok."
        )
        // qBittorrent reads an unknown filter as "all", and refuses a sort by an unknown field.
        for (const name of ["everything", "__proto__", "valueOf", "constructor", "toString", "hasOwnProperty"]) {
          const listed = yield* send(url, "GET", `torrents/info?filter=${name}`)
          assert.strictEqual(listed.status, 200, name)
          assert.lengthOf(JSON.parse(listed.body), 1, name)
          assert.strictEqual((yield* send(url, "GET", `torrents/info?sort=${name}`)).status, 400, name)
        }
        for (const path of ["__proto__", "constructor", "toString", "torrents/__proto__", "app/valueOf"]) {
          assert.strictEqual((yield* send(url, "GET", path)).status, 404, path)
          assert.strictEqual((yield* post(url, path, {})).status, 404, path)
        }
      }).pipe(Effect.scoped)
  )

  it.effect("category names that leave the mirror root are 400s, wherever they come in", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit({ categories: ["tv"] })
      const t = makeTorrent("Show.S05E01")
      const form = new FormData()
      form.append("torrents", new Blob([t.content]), "Show.S05E01.torrent")
      assert.strictEqual((yield* send(url, "POST", "torrents/add", form)).body, "Ok.")
      for (const category of ["../x", "/abs", "a/../../b", "tv\\..\\x", "a//b", "C:\\x", "x\u0000y"]) {
        const created = yield* post(url, "torrents/createCategory", { category })
        assert.strictEqual(created.status, 400, category)
        assert.match(created.body, /^category /, category)
        const added = yield* post(url, "torrents/add", { urls: `magnet:?xt=urn:btih:${"c".repeat(40)}`, category })
        assert.strictEqual(added.status, 400, category)
        assert.strictEqual((yield* post(url, "torrents/setCategory", { hashes: t.hash, category })).status, 400)
      }
      assert.strictEqual((yield* post(url, "torrents/createCategory", { category: "tv" })).status, 409)
      assert.strictEqual((yield* post(url, "torrents/setCategory", { hashes: t.hash, category: "nope" })).status, 409)
      assert.strictEqual((yield* post(url, "torrents/editCategory", { category: "nope" })).status, 409)
      assert.deepStrictEqual(
        (yield* control.calls).map((c) => c.method),
        ["add"],
        "only the first add reached the intake"
      )
    }).pipe(Effect.scoped)
  )

  it.effect(
    "add: no source and unreadable links answer Fails., a file that is not a torrent 415 (as qBittorrent)",
    () =>
      Effect.gen(function* () {
        const { url, control } = yield* startQbit()
        const none = yield* post(url, "torrents/add", { category: "tv" })
        assert.deepStrictEqual([none.status, none.body], [200, "Fails."])
        assert.strictEqual((yield* post(url, "torrents/add", { urls: "magnet:?dn=no-hash" })).body, "Fails.")
        assert.strictEqual((yield* post(url, "torrents/add", { urls: "ftp://example.org/x.torrent" })).body, "Fails.")
        const form = new FormData()
        form.append("torrents", new Blob(["not bencode"]), "broken.torrent")
        const broken = yield* send(url, "POST", "torrents/add", form)
        assert.deepStrictEqual(
          [broken.status, broken.body],
          [415, "Error: 'broken.torrent' is not a valid torrent file."]
        )
        assert.lengthOf(yield* control.items, 0)
        // One good source among bad ones: Ok. (qBittorrent's partial success).
        const mixed = yield* post(url, "torrents/add", { urls: `magnet:?dn=x\nmagnet:?xt=urn:btih:${"d".repeat(40)}` })
        assert.strictEqual(mixed.body, "Ok.")
        assert.lengthOf(yield* control.items, 1)
      }).pipe(Effect.scoped)
  )

  it.effect(
    "add by http(s) URL: the .torrent is fetched and identified by its info-hash; a redirect to a magnet is followed",
    () =>
      Effect.gen(function* () {
        const t = makeTorrent("Show.S06E01.mkv")
        const indexer = yield* serveOnce((request, response) => {
          const path = new URL(request.url ?? "/", "http://x").pathname
          if (path === "/t/1.torrent") {
            response.writeHead(200, { "content-type": "application/x-bittorrent" }).end(t.content)
          } else if (path === "/t/2") {
            response.writeHead(302, { location: `magnet:?xt=urn:btih:${"e".repeat(40)}&dn=Redirected` }).end()
          } else if (path === "/t/3") {
            response.writeHead(302, { location: "/t/1.torrent" }).end()
          } else {
            response.writeHead(200, { "content-type": "text/html" }).end("<html>login first</html>")
          }
        })
        const { url, control } = yield* startQbit()
        assert.strictEqual((yield* post(url, "torrents/add", { urls: `${indexer}/t/1.torrent?apikey=k` })).body, "Ok.")
        assert.strictEqual((yield* post(url, "torrents/add", { urls: `${indexer}/t/2` })).body, "Ok.")
        assert.strictEqual((yield* post(url, "torrents/add", { urls: `${indexer}/t/3` })).body, "Ok.")
        assert.strictEqual((yield* post(url, "torrents/add", { urls: `${indexer}/html` })).body, "Fails.")
        assert.deepStrictEqual(
          (yield* control.items).map((i) => [i.id, i.name]),
          [
            [`btih:${t.hash}`, "Show.S06E01.mkv"],
            [`btih:${"e".repeat(40)}`, "Redirected"]
          ]
        )
      }).pipe(Effect.scoped)
  )

  it.effect("a page of another site is refused (its Origin), even with the right credentials", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const csrf = yield* send(url, "POST", "torrents/delete", new URLSearchParams({ hashes: "all" }), {
        origin: "https://evil.example"
      })
      assert.deepStrictEqual([csrf.status, csrf.body], [403, "cross-site request refused"])
      const sameOrigin = yield* send(url, "GET", "app/webapiVersion", undefined, { origin: url })
      assert.strictEqual(sameOrigin.status, 200)
      assert.lengthOf(yield* control.calls, 0)
    }).pipe(Effect.scoped)
  )

  it.effect("the intake cannot record: add is a 503 with its reason, never Ok.", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit({
        wrapIntake: (intake) => ({
          ...intake,
          add: () => Effect.fail(new IntakeError({ reason: "unavailable", problem: "the store is read-only" }))
        })
      })
      const response = yield* post(url, "torrents/add", { urls: `magnet:?xt=urn:btih:${"a".repeat(40)}` })
      assert.deepStrictEqual(
        [response.status, response.body],
        [503, "dlsync cannot record the torrent: the store is read-only"]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a busy port: the layer fails with one line naming qbittorrent.listen", () =>
    Effect.gen(function* () {
      const busy = yield* serveOnce((_, response) => response.end())
      const port = Number(new URL(busy).port)
      const control = makeMemoryIntake("/srv/none")
      const error = yield* Layer.build(
        QbittorrentServer.layer({
          settings: {
            listen: { host: "127.0.0.1", port },
            username: USERNAME,
            password: Redacted.make(PASSWORD),
            path_map: []
          },
          mirrorRoot: "/srv/none"
        }).pipe(Layer.provide(Layer.succeed(Intake, control.intake)))
      ).pipe(Effect.flip)
      assert.strictEqual(error._tag, "HealthServerError")
      assert.strictEqual(
        error.message,
        `cannot listen on 127.0.0.1:${port} (qbittorrent.listen): the address is already in use; choose another address or set it to "off"`
      )
    }).pipe(Effect.scoped)
  )
})

// ---------------------------------------------------------------------------------------

/** One request with node:http, for what fetch will not send (a Host header, a lying Content-Length). */
const rawRequest = (
  url: string,
  options: {
    readonly method?: string
    readonly path: string
    readonly headers: Record<string, string>
    readonly body?: Buffer | undefined
  }
) =>
  Effect.callback<{ status: number; body: string }>((resume) => {
    const target = new URL(url)
    const request = Http.request(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers
      },
      (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          body += chunk
        })
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
      }
    )
    // The server may answer and close before the whole body is written: that is the point.
    request.on("error", () => undefined)
    if (options.body === undefined) request.flushHeaders()
    else request.end(options.body)
    return Effect.sync(() => request.destroy())
  })

/** A local HTTP server for the test's scope; its origin. */
const serveOnce = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; origin: string }>((resume) => {
      const server = Http.createServer(handler)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, origin: `http://127.0.0.1:${port}` }))
      })
    }),
    ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map(({ origin }) => origin))
