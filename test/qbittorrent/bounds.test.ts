/**
 * What the qBittorrent API reads of a request body: before the credentials are checked, no
 * more than a sign-in needs (auth/login's form, a few KiB; nothing at all for any other
 * call); after, a small url-encoded form, or multipart parts streamed within their limits.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { LOGIN_MAX_BYTES, MAX_FORM_BYTES, MAX_TORRENT_BYTES } from "../../src/qbittorrent/requestForm.ts"
import { chunked, rawExchange, writeSlowly } from "../support/rawHttp.ts"
import { makeTorrent } from "../support/torrentFixture.ts"
import { PASSWORD, startQbit, USERNAME } from "./harness.ts"

const BASIC = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64")}`
const HUGE = 32 * 1024 * 1024

/**
 * A POST of 32 MiB to `path`, its length declared (sent as it is) or not (chunked), written
 * bit by bit while the answer is awaited.
 */
const flood = (url: string, path: string, headers: Record<string, string>, framing: "declared" | "chunked") => {
  const framed = framing === "declared" ? { "content-length": String(HUGE) } : { "transfer-encoding": "chunked" }
  const head = `POST /api/v2/${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries({ ...headers, ...framed })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`
  return rawExchange(url, head, (s) => writeSlowly(s, HUGE, 16 * 1024, framing === "chunked" ? chunked : undefined))
}

const post = (url: string, path: string, body: URLSearchParams | FormData, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/api/v2/${path}`, { method: "POST", headers, body })
    return { status: response.status, body: await response.text() }
  })

describe("qBittorrent API: request bodies", () => {
  it.effect("auth/login takes a few KiB: a bigger body is 413 before the client finished sending it", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      const form = { "content-type": "application/x-www-form-urlencoded" }
      // Declared: refused on the head alone; streamed: once past the bound, long before 32 MiB.
      for (const framing of ["declared", "chunked"] as const) {
        const refused = yield* flood(url, "auth/login", form, framing)
        assert.strictEqual(refused.status, 413, framing)
        assert.isFalse(refused.sentAll, `${framing}: answered before the client finished sending`)
      }
      const padded = new URLSearchParams({ username: USERNAME, password: PASSWORD, pad: "x".repeat(LOGIN_MAX_BYTES) })
      assert.strictEqual((yield* post(url, "auth/login", padded)).status, 413)
      const signedIn = yield* post(url, "auth/login", new URLSearchParams({ username: USERNAME, password: PASSWORD }))
      assert.strictEqual(signedIn.body, "Ok.", "a sign-in that fits is taken")
    }).pipe(Effect.scoped)
  )

  it.effect("without credentials no body is read: a 32 MiB upload is 403 before it is sent", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const refused = yield* flood(
        url,
        "torrents/add",
        { "content-type": "multipart/form-data; boundary=b" },
        "declared"
      )
      assert.deepStrictEqual([refused.status, refused.sentAll, (yield* control.calls).length], [403, false, 0])
    }).pipe(Effect.scoped)
  )

  it.effect("signed in: a url-encoded form over its small cap is 413, declared or streamed", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const over = new URLSearchParams({
        urls: `magnet:?xt=urn:btih:${"a".repeat(40)}`,
        pad: "x".repeat(MAX_FORM_BYTES)
      })
      const declared = yield* post(url, "torrents/add", over, { authorization: BASIC })
      assert.strictEqual(declared.status, 413)
      const form = { authorization: BASIC, "content-type": "application/x-www-form-urlencoded" }
      const streamed = yield* flood(url, "torrents/add", form, "chunked")
      assert.strictEqual(streamed.status, 413)
      assert.isFalse(streamed.sentAll)
      assert.lengthOf(yield* control.calls, 0)
    }).pipe(Effect.scoped)
  )

  it.effect("signed in: a .torrent within its limit is taken, a bigger one is 413", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const upload = (content: Uint8Array<ArrayBuffer>) => {
        const form = new FormData()
        form.append("torrents", new Blob([content]), "big.torrent")
        form.append("category", "tv")
        return post(url, "torrents/add", form, { authorization: BASIC })
      }
      // 20 bytes of pieces per 16 KiB of content: 3 GiB of content is a 3.75 MiB .torrent.
      const big = makeTorrent("Big.Season", [{ path: ["big.mkv"], size: 3 * 1024 ** 3 }])
      assert.isBelow(big.content.length, MAX_TORRENT_BYTES)
      assert.strictEqual((yield* upload(big.content)).body, "Ok.")
      const tooBig = new Uint8Array(MAX_TORRENT_BYTES + 1)
      tooBig.set(big.content)
      const refused = yield* upload(tooBig)
      assert.strictEqual(refused.status, 413)
      assert.deepStrictEqual(
        (yield* control.items).map((i) => i.name),
        ["Big.Season"]
      )
    }).pipe(Effect.scoped)
  )
})
