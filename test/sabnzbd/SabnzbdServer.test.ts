/**
 * The SABnzbd surface as a server: off unless configured, one line when it cannot listen,
 * and what it reads of a body: without the API key in the query no more than a few KiB
 * before the key is known (in the form's fields, ahead of any file), with it a small
 * url-encoded form or a multipart upload within its limits.
 */
import * as Http from "node:http"
import * as Net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Intake } from "../../src/intake/Intake.ts"
import { MAX_FORM_BYTES, PRE_AUTH_MAX_BYTES, SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"
import { chunked, rawExchange, writeSlowly } from "../support/rawHttp.ts"
import { KEY, NZB, sonarrUrl, withSurface } from "./harness.ts"
import { readAddResponse } from "./sonarrReads.ts"

const withIntake = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Effect.sync(() => layer.pipe(Layer.provide(Layer.succeed(Intake, makeMemoryIntake("/srv/dlsync").intake))))

/** A port held by another socket for the length of the test. */
const occupiedPort = Effect.acquireRelease(
  Effect.callback<Net.Server>((resume) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
).pipe(
  Effect.map((server) => {
    const address = server.address()
    return address !== null && typeof address === "object" ? address.port : assert.fail("no port")
  })
)

describe("SabnzbdServer", () => {
  it.effect("is off without an API key or with listen off", () =>
    Effect.gen(function* () {
      for (const settings of [
        { listen: { host: "127.0.0.1", port: 0 }, apiKey: Option.none(), pathMap: [], categories: [] },
        { listen: "off" as const, apiKey: Option.some(Redacted.make("k")), pathMap: [], categories: [] }
      ]) {
        const layer = yield* withIntake(SabnzbdServer.layer({ settings, root: "/srv/dlsync" }))
        const server = yield* Effect.provide(SabnzbdServer.use(Effect.succeed), layer)
        assert.isUndefined(server.url)
      }
    })
  )

  it.effect("a port in use fails with one line naming sabnzbd.listen", () =>
    Effect.gen(function* () {
      const port = yield* occupiedPort
      const layer = yield* withIntake(
        SabnzbdServer.layer({
          settings: {
            listen: { host: "127.0.0.1", port },
            apiKey: Option.some(Redacted.make("k")),
            pathMap: [],
            categories: []
          },
          root: "/srv/dlsync"
        })
      )
      const error = yield* Effect.flip(Layer.build(layer))
      assert.strictEqual(error._tag, "HealthServerError")
      assert.strictEqual(error.code, "EADDRINUSE")
      assert.strictEqual(
        error.message,
        `cannot listen on 127.0.0.1:${port} (sabnzbd.listen): the address is already in use; choose another address or set it to "off"`
      )
      assert.notInclude(error.message, "\n")
    })
  )
})

describe("SabnzbdServer: request bodies", () => {
  it.effect("a malformed multipart body is 400 and a body over the limit 413, each with a SABnzbd error", () =>
    withSurface(
      ({ base, memory }) =>
        Effect.gen(function* () {
          const malformed = yield* Effect.promise(async () => {
            const response = await fetch(sonarrUrl(base, "addfile"), {
              method: "POST",
              headers: { "content-type": "multipart/form-data; boundary=XYZ" },
              body: '--XYZ\r\nContent-Disposition: form-data; name="name"; filename="a.nzb"\r\n\r\nno closing boundary'
            })
            return { status: response.status, body: JSON.parse(await response.text()) }
          })
          assert.strictEqual(malformed.status, 400)
          assert.isFalse(malformed.body.status)
          assert.match(malformed.body.error, /malformed multipart/)

          const huge = yield* Effect.promise(async () => {
            const form = new FormData()
            form.append("name", new Blob([new Uint8Array(200_000)], { type: "application/x-nzb" }), "big.nzb")
            const response = await fetch(sonarrUrl(base, "addfile"), { method: "POST", body: form })
            return { status: response.status, body: JSON.parse(await response.text()) }
          })
          assert.strictEqual(huge.status, 413)
          assert.deepStrictEqual(huge.body, { status: false, error: "request body too large: at most 64.0 KiB" })
          assert.deepStrictEqual(yield* memory.items, [])
        }),
      { maxBodyBytes: 64 * 1024 }
    )
  )

  it.effect("a chunked body (no content-length) over the limit is 413 too; a url-encoded addurl body is read", () =>
    withSurface(
      ({ base, memory }) =>
        Effect.gen(function* () {
          const chunked = yield* Effect.promise(
            () =>
              new Promise<number>((resolve, reject) => {
                const req = Http.request(sonarrUrl(base, "addfile"), {
                  method: "POST",
                  headers: { "content-type": "multipart/form-data; boundary=B", "transfer-encoding": "chunked" }
                })
                req.on("response", (res) => {
                  res.resume()
                  resolve(res.statusCode ?? 0)
                })
                req.on("error", reject)
                req.write('--B\r\nContent-Disposition: form-data; name="name"; filename="a.nzb"\r\n\r\n')
                for (let i = 0; i < 20; i++) req.write(Buffer.alloc(10_000, 120))
                req.end("\r\n--B--\r\n")
              })
          )
          assert.strictEqual(chunked, 413)
          const form = yield* Effect.promise(async () => {
            const response = await fetch(new URL("/api", base), {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({
                mode: "addurl",
                name: "https://indexer.example/get/9",
                cat: "movies",
                apikey: KEY,
                output: "json"
              })
            })
            return readAddResponse(await response.text())
          })
          assert.strictEqual(form.length, 1)
          assert.deepStrictEqual(
            (yield* memory.added).map((a) => [a.source._tag, a.options.category]),
            [["Url", "movies"]]
          )
        }),
      { maxBodyBytes: 64 * 1024 }
    )
  )

  it.effect(
    "without the key in the query, a body is read only as far as a few KiB: 413 before the client finished",
    () =>
      withSurface(({ base, memory }) =>
        Effect.gen(function* () {
          // The 63 MB `a=&a=&…` POST: refused once past the bound, whatever follows.
          const head = (headers: string) =>
            `POST /api?mode=addurl&output=json HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}\r\n`
          const form = "content-type: application/x-www-form-urlencoded\r\n"
          const size = 63 * 1024 * 1024
          const a = Buffer.from("a=&")
          const streamed = yield* rawExchange(base, head(`${form}transfer-encoding: chunked\r\n`), (socket) =>
            writeSlowly(socket, size, 48 * 1024, (b) => chunked(Buffer.concat(Array(b.length / 3).fill(a))))
          )
          assert.strictEqual(streamed.status, 413)
          assert.isFalse(streamed.sentAll, "answered before the client finished sending")
          const declared = yield* rawExchange(base, head(`${form}content-length: ${size}\r\n`), (socket) =>
            writeSlowly(socket, size)
          )
          assert.strictEqual(declared.status, 413)
          assert.isFalse(declared.sentAll)
          // A form that fits is read, and answered as SABnzbd answers it.
          const small = yield* Effect.promise(async () => {
            const response = await fetch(new URL("/api", base), {
              method: "POST",
              body: new URLSearchParams({ mode: "addurl", name: "https://indexer.example/1", output: "json" })
            })
            return JSON.parse(await response.text())
          })
          assert.deepStrictEqual(small, { status: false, error: "API Key Required" })
          assert.deepStrictEqual(yield* memory.items, [])
        })
      )
  )

  it.effect(
    "the key in a multipart field is taken before the file it precedes; after a big file it comes too late",
    () =>
      withSurface(({ base, memory }) =>
        Effect.gen(function* () {
          const nzb = NZB.replace("</nzb>", `<!--${"x".repeat(2 * PRE_AUTH_MAX_BYTES)}--></nzb>`)
          const upload = (keyFirst: boolean) =>
            Effect.promise(async () => {
              const form = new FormData()
              form.append("mode", "addfile")
              form.append("output", "json")
              if (keyFirst) form.append("apikey", KEY)
              form.append("name", new Blob([nzb], { type: "application/x-nzb" }), `Order.${keyFirst}.nzb`)
              if (!keyFirst) form.append("apikey", KEY)
              const response = await fetch(new URL("/api", base), { method: "POST", body: form })
              return { status: response.status, body: JSON.parse(await response.text()) }
            })
          const late = yield* upload(false)
          assert.strictEqual(late.status, 413)
          assert.isFalse(late.body.status)
          assert.include(late.body.error, "apikey")
          const first = yield* upload(true)
          assert.strictEqual(first.status, 200)
          assert.lengthOf(readAddResponse(JSON.stringify(first.body)), 1)
          assert.deepStrictEqual(
            (yield* memory.items).map((i) => i.name),
            ["Order.true"]
          )
        })
      )
  )

  it.effect("with the key: a url-encoded form over its small cap is 413", () =>
    withSurface(({ base, memory }) =>
      Effect.gen(function* () {
        const response = yield* Effect.promise(async () => {
          const body = new URLSearchParams({ name: "https://indexer.example/2", pad: "x".repeat(MAX_FORM_BYTES) })
          const response = await fetch(sonarrUrl(base, "addurl"), { method: "POST", body })
          return { status: response.status, body: JSON.parse(await response.text()) }
        })
        assert.strictEqual(response.status, 413)
        assert.isFalse(response.body.status)
        assert.deepStrictEqual(yield* memory.items, [])
      })
    )
  )
})
