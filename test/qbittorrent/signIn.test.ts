/**
 * Signing in to the qBittorrent API as qBittorrent decides it, against what a web page in
 * the user's browser or a misconfigured app does: login by POST only, a cross-site request
 * refused by its Origin, its Referer or its Sec-Fetch-Site, one failure counted per wrong
 * credentials (however many requests carry them), and every failure logged with its address.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { MAX_FAILED_LOGINS } from "../../src/qbittorrent/Sessions.ts"
import { PASSWORD, startQbit, USERNAME } from "./harness.ts"

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`

const call = (
  url: string,
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly body?: URLSearchParams } = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/api/v2/${path}`, {
      method,
      ...(options.headers === undefined ? {} : { headers: options.headers }),
      ...(options.body === undefined ? {} : { body: options.body })
    })
    return { status: response.status, body: await response.text(), cookie: response.headers.get("set-cookie") }
  })

const login = (url: string, password: string, headers: Record<string, string> = {}) =>
  call(url, "POST", "auth/login", { headers, body: new URLSearchParams({ username: USERNAME, password }) })

/** Collects the log lines written while `body` runs, servers built in it included. */
const withLogs = <A, E, R>(body: (logs: ReadonlyArray<string>) => Effect.Effect<A, E, R>) => {
  const logs: Array<string> = []
  return body(logs).pipe(Effect.provide(Logger.layer([Logger.make((o) => logs.push(Logger.formatLogFmt.log(o)))])))
}

describe("qBittorrent sign-in", () => {
  it.effect("auth/login over GET is 405 and counts nothing: no <img> on any page can ban the address", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      for (let i = 0; i < MAX_FAILED_LOGINS + 2; i++) {
        const viaGet = yield* call(url, "GET", `auth/login?username=${USERNAME}&password=guess${i}`)
        assert.deepStrictEqual([viaGet.status, viaGet.cookie], [405, null])
      }
      const signedIn = yield* login(url, PASSWORD)
      assert.deepStrictEqual([signedIn.status, signedIn.body], [200, "Ok."], "not banned")
      const right = yield* call(url, "GET", `auth/login?username=${USERNAME}&password=${encodeURIComponent(PASSWORD)}`)
      assert.deepStrictEqual([right.status, right.cookie], [405, null], "no session over GET, even when right")
    }).pipe(Effect.scoped)
  )

  it.effect("a cross-site request is refused by its Origin, else its Referer, else its Sec-Fetch-Site", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const authorization = basic(USERNAME, PASSWORD)
      const deleteAll = (headers: Record<string, string>) =>
        call(url, "POST", "torrents/delete", {
          headers: { authorization, ...headers },
          body: new URLSearchParams({ hashes: "all", deleteFiles: "true" })
        })
      for (const headers of [
        { origin: "https://evil.example" },
        { referer: "https://evil.example/page.html" },
        { referer: `http://evil.example:${new URL(url).port}/` },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "same-site" },
        { origin: "null" }
      ]) {
        const refused = yield* deleteAll(headers)
        assert.deepStrictEqual(
          [refused.status, refused.body],
          [403, "cross-site request refused"],
          JSON.stringify(headers)
        )
      }
      assert.lengthOf(yield* control.calls, 0, "nothing reached the intake")
      for (const headers of [
        {},
        { origin: url },
        { referer: `${url}/index.html` },
        { "sec-fetch-site": "same-origin" },
        { "sec-fetch-site": "none" }
      ]) {
        assert.strictEqual((yield* deleteAll(headers)).status, 200, JSON.stringify(headers))
      }
      // Sign-ins from another site's page neither count nor sign in.
      for (let i = 0; i < MAX_FAILED_LOGINS + 1; i++) {
        const forged = yield* login(url, `guess${i}`, { referer: "https://evil.example/" })
        assert.deepStrictEqual([forged.status, forged.cookie], [403, null])
      }
      assert.strictEqual((yield* login(url, PASSWORD)).body, "Ok.", "not banned")
    }).pipe(Effect.scoped)
  )

  it.effect("the same wrong credentials count once, however many requests carry them (Radarr's Test)", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      const stale = basic(USERNAME, "old password")
      // Each Test click: the version probe with Basic, then auth/login with Basic and the form.
      for (let click = 0; click < MAX_FAILED_LOGINS + 2; click++) {
        assert.strictEqual(
          (yield* call(url, "GET", "app/webapiVersion", { headers: { authorization: stale } })).status,
          403
        )
        const refused = yield* login(url, "old password", { authorization: stale })
        assert.deepStrictEqual([refused.status, refused.body], [200, "Fails."])
      }
      assert.strictEqual((yield* login(url, PASSWORD)).body, "Ok.", "one wrong password is not a guessing attack")
      // Different wrong passwords are: the fifth bans the address.
      for (let guess = 1; guess < MAX_FAILED_LOGINS; guess++) {
        assert.strictEqual((yield* login(url, `guess ${guess}`)).body, "Fails.")
      }
      assert.strictEqual((yield* call(url, "GET", "torrents/info", { headers: { authorization: stale } })).status, 403)
      const banned = yield* login(url, PASSWORD)
      assert.strictEqual(banned.status, 403)
      assert.include(banned.body, "banned")
    }).pipe(Effect.scoped)
  )

  it.effect("every failed sign-in is logged with its address and user name, never with the password", () =>
    withLogs((logs) =>
      Effect.gen(function* () {
        const { url } = yield* startQbit()
        yield* login(url, "hunter2-form")
        yield* call(url, "GET", "torrents/info", { headers: { authorization: basic("radarr", "hunter2-basic") } })
        yield* call(url, "GET", "torrents/info", { headers: { authorization: "Bearer hunter2-bearer" } })
        const failures = logs.filter((line) => line.includes("sign-in"))
        assert.lengthOf(failures, 3, logs.join("\n"))
        for (const line of failures) {
          assert.include(line, "127.0.0.1")
          assert.notInclude(line, "hunter2")
        }
        assert.include(failures[0], USERNAME)
        assert.include(failures[1], "radarr")
      })
    ).pipe(Effect.scoped)
  )
})
