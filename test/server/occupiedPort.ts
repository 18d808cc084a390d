import * as Net from "node:net"
import { assert } from "@effect/vitest"
import { Effect } from "effect"

/** A loopback port another socket holds for the rest of the test's scope. */
export const occupiedPort = Effect.acquireRelease(
  Effect.callback<Net.Server, Error>((resume) => {
    const server = Net.createServer()
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen({ host: "127.0.0.1", port: 0 }, () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(
  Effect.map((server) => {
    const address = server.address()
    return address !== null && typeof address === "object" ? address.port : assert.fail("no port")
  })
)
