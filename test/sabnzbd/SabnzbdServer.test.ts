import * as Net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Intake } from "../../src/intake/Intake.ts"
import { SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { makeMemoryIntake } from "../intake/memoryIntake.ts"

const withIntake = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Effect.flatMap(makeMemoryIntake("/srv/dlsync"), (memory) =>
    Effect.succeed(layer.pipe(Layer.provide(Layer.succeed(Intake, memory.intake))))
  )

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
