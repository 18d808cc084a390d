/**
 * A separate dlsync-like process for the cross-process token tests. Argument: JSON
 * `{ stateDir, baseUrl, authUrl, mode }`. It prints `ready`, waits for a line on stdin, then:
 * - mode "once": one GET /account (refreshing first when the stored token is expired);
 * - mode "rotate": forces refreshes in a loop, printing `rotated` after each, until killed.
 * Finally it prints one JSON line `{ ok, loginRequired, accountId?, error? }`.
 */
import * as Readline from "node:readline"
import { Effect, Schema } from "effect"
import { ApiClient } from "../../../src/api/ApiClient.ts"
import { Credentials } from "../../../src/api/Credentials.ts"
import { isLoginRequired } from "../../../src/auth/AuthError.ts"
import { oauthClientLayer } from "./layers.ts"

const args = Schema.decodeUnknownSync(
  Schema.fromJsonString(
    Schema.Struct({
      stateDir: Schema.String,
      baseUrl: Schema.String,
      authUrl: Schema.String,
      mode: Schema.Literals(["once", "rotate"])
    })
  )
)(process.argv[2] ?? "")

const waitForGo = () =>
  new Promise<void>((resolve) => {
    const rl = Readline.createInterface({ input: process.stdin })
    rl.once("line", () => {
      rl.close()
      resolve()
    })
  })

const program = Effect.gen(function* () {
  process.stdout.write("ready\n")
  yield* Effect.promise(waitForGo)
  if (args.mode === "rotate") {
    const credentials = yield* Credentials
    for (;;) {
      const bearer = yield* credentials.bearer
      yield* credentials.refreshAfterUnauthorized(bearer)
      process.stdout.write("rotated\n")
    }
  }
  const account = yield* (yield* ApiClient).account.get
  return account.id
}).pipe(
  Effect.provide(oauthClientLayer(args, args.stateDir)),
  Effect.match({
    onSuccess: (accountId) => ({ ok: true, loginRequired: false, accountId }),
    onFailure: (e) => ({ ok: false, loginRequired: isLoginRequired(e), error: e.message })
  })
)

// Exits explicitly: pooled keep-alive connections would keep the process up.
Effect.runPromise(program).then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0)),
  (defect) =>
    process.stdout.write(`${JSON.stringify({ ok: false, loginRequired: false, error: String(defect) })}\n`, () =>
      process.exit(1)
    )
)
