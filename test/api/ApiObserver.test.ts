/**
 * The client's observer hook: each attempt's status and each retry, labelled with the
 * route template (never the concrete path); ApiObserver.none sees nothing and costs nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiObserver } from "../../src/api/ApiHttp.ts"
import { account, fileId as fid } from "./fixtures.ts"
import { clientLayer, startServer } from "./testServer.ts"

describe("ApiObserver", () => {
  it.live("sees every attempt's status and every retry, by route template", () =>
    Effect.gen(function* () {
      let n = 0
      const server = yield* startServer((req) =>
        req.path.startsWith("/api/v1/files/")
          ? { status: 404, body: { error: { code: "not_found", message: "no such file" } } }
          : ++n === 1
            ? { status: 503 }
            : { body: { data: account } }
      )
      const seen: Array<string> = []
      const observer = Layer.succeed(ApiObserver, {
        request: (operation, status) => Effect.sync(() => seen.push(`${operation} ${status}`)),
        retry: (operation) => Effect.sync(() => seen.push(`retry ${operation}`)),
        rateLimitWait: () => Effect.void
      })
      yield* Effect.gen(function* () {
        const client = yield* ApiClient
        yield* client.account.get
        yield* Effect.flip(client.files.get(fid("f_secret_id_42")))
      }).pipe(Effect.provide(clientLayer(server.origin, { observer }), { local: true }))
      assert.deepStrictEqual(seen, [
        "GET /account 503",
        "retry GET /account",
        "GET /account 200",
        "GET /files/{file} 404"
      ])
    })
  )

  it.live("ApiObserver.none: the client works and nothing is observed", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ body: { data: account } }))
      const got = yield* Effect.gen(function* () {
        return yield* (yield* ApiClient).account.get
      }).pipe(Effect.provide(clientLayer(server.origin), { local: true }))
      assert.strictEqual(got.id, account.id)
    })
  )
})
