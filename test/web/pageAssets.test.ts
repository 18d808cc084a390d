/**
 * The built page as the daemon serves it (src/web/pageAssets.ts) and a build made while a
 * daemon runs (scripts/buildPage.ts, as `npm ci` or `npm run build` during an upgrade): the
 * running daemon keeps serving the page it listed at start, index and assets alike, so an
 * open browser never meets an index naming assets the daemon refuses.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { buildPage } from "../../scripts/buildPage.ts"
import { loadPageAssets } from "../../src/web/pageAssets.ts"

const get = (path: string, headers: Record<string, string> = {}) =>
  HttpServerRequest.fromWeb(new Request(`http://127.0.0.1${path}`, { headers }))

const text = async (response: HttpServerResponse.HttpServerResponse) => {
  const web = HttpServerResponse.toWeb(response)
  return { status: web.status, headers: web.headers, body: await web.text() }
}

describe("the built page", () => {
  it.live("keeps serving the page listed at start after a build replaced it on disk", () =>
    Effect.gen(function* () {
      const out = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-page-")), "web")
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => Fs.rmSync(Path.dirname(out), { recursive: true, force: true }))
      )
      yield* Effect.promise(() => buildPage(out))
      const page = yield* loadPageAssets([out])
      const firstResponse = yield* page.index(get("/"))
      const first = yield* Effect.promise(() => text(firstResponse))
      assert.strictEqual(first.status, 200)
      const [, script] = /src="assets\/([^"]+)"/.exec(first.body) ?? []
      assert.isString(script)

      // What a build of other sources leaves: an index naming other assets.
      const index = Path.join(out, "index.html")
      Fs.writeFileSync(index, Fs.readFileSync(index, "utf8").replace(script ?? "", "main-NEWBUILD.js"))
      Fs.rmSync(`${index}.gz`)

      const againResponse = yield* page.index(get("/"))
      const again = yield* Effect.promise(() => text(againResponse))
      assert.strictEqual(again.body, first.body, "the index of the listing taken at start")
      const asset = yield* page.asset(get(`/assets/${script}`), script ?? "")
      assert.strictEqual(HttpServerResponse.toWeb(asset).status, 200)
      const zipped = yield* page.index(get("/", { "accept-encoding": "gzip, br" }))
      assert.strictEqual(HttpServerResponse.toWeb(zipped).headers.get("content-encoding"), "gzip")
      const cached = yield* page.index(get("/", { "if-none-match": again.headers.get("etag") ?? "" }))
      assert.strictEqual(HttpServerResponse.toWeb(cached).status, 304)
    }).pipe(Effect.scoped)
  )

  it.live("a build keeps the assets of the page it replaces", () =>
    Effect.gen(function* () {
      const out = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-page-")), "web")
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => Fs.rmSync(Path.dirname(out), { recursive: true, force: true }))
      )
      Fs.mkdirSync(Path.join(out, "assets"), { recursive: true })
      Fs.writeFileSync(Path.join(out, "index.html"), '<script type="module" src="assets/main-OLD.js"></script>')
      Fs.writeFileSync(Path.join(out, "assets", "main-OLD.js"), "old")
      Fs.writeFileSync(Path.join(out, "assets", "main-OLDER.js"), "older, named by no index")
      yield* Effect.promise(() => buildPage(out))
      assert.strictEqual(Fs.readFileSync(Path.join(out, "assets", "main-OLD.js"), "utf8"), "old")
      assert.isFalse(Fs.existsSync(Path.join(out, "assets", "main-OLDER.js")))
      assert.notInclude(Fs.readFileSync(Path.join(out, "index.html"), "utf8"), "main-OLD.js")
    }).pipe(Effect.scoped)
  )
})
