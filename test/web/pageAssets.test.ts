/**
 * The built page as the daemon serves it (src/web/pageAssets.ts), from a real build
 * (scripts/buildPage.ts): one answer with the style and the script inline, each allowed by
 * its hash and nothing else; the first answer in its data block, whatever a file's name
 * holds, and all before it sent before it is made; the gzip answer (its fixed parts deflated
 * at start) the same page; the page made at start kept after a build replaced it on disk (an
 * upgrade's `npm ci`); a build that cannot be inlined refused with one line.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { buildPage } from "../../scripts/buildPage.ts"
import { FIRST_ANSWER_ID, type FirstAnswer } from "../../src/web/firstAnswer.ts"
import { loadPageAssets, type PageAssets } from "../../src/web/pageAssets.ts"

const get = (headers: Record<string, string> = {}) =>
  HttpServerRequest.fromWeb(new Request("http://127.0.0.1/", { headers }))

const answerOf = async (response: HttpServerResponse.HttpServerResponse) => {
  const web = HttpServerResponse.toWeb(response)
  return { status: web.status, headers: web.headers, body: Buffer.from(await web.arrayBuffer()) }
}

/** The page's answer to `request`, read. */
const serve = (page: PageAssets, request: HttpServerRequest.HttpServerRequest, first: FirstAnswer<unknown>) =>
  Effect.flatMap(page.index(request, Effect.succeed(first)), (response) => Effect.promise(() => answerOf(response)))

/** A name that would end the data block and run a script, were it written as it is. */
const HOSTILE_NAME = "</script><script>alert(1)</script><!--&-->\u2028.mkv"

const signedIn = (path: string): FirstAnswer<unknown> => ({
  loginRequired: false,
  signedIn: true,
  status: { failures: [{ path, remoteId: null, attempts: 1, reason: "a <b>reason</b>" }] }
})

/** A fresh build in a temporary folder, removed with the scope. */
const freshBuild = Effect.gen(function* () {
  const out = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-page-")), "web")
  yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(Path.dirname(out), { recursive: true, force: true })))
  yield* Effect.promise(() => buildPage(out))
  return out
})

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

describe("the built page", () => {
  it.live("is one answer: its style and script inline and allowed by their hashes, the first answer in its block", () =>
    Effect.gen(function* () {
      const page = yield* loadPageAssets([yield* freshBuild])
      const first = signedIn(`Movies/${HOSTILE_NAME}`)
      const answer = yield* serve(page, get(), first)
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.headers.get("cache-control"), "no-store", "it holds the status of now")
      const html = answer.body.toString("utf8")
      assert.notMatch(html, /<script[^>]*\bsrc=|<link rel="stylesheet"/, "nothing more to fetch")
      assert.notInclude(html, "<script>alert(1)", "no name opens markup")
      const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
      assert.deepStrictEqual(
        scripts.map(([, attributes]) => attributes),
        [' type="module"', ` type="application/json" id="${FIRST_ANSWER_ID}"`],
        "the script, then the data block: no other"
      )
      const [[, , script = ""] = [], [, , data = ""] = []] = scripts
      assert.deepStrictEqual(JSON.parse(data), first)
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? ""
      assert.isAbove(style.length, 0)
      const policy = answer.headers.get("content-security-policy") ?? ""
      assert.include(policy, `script-src ${sha256(script)};`)
      assert.include(policy, `style-src ${sha256(style)};`)
      assert.include(policy, "default-src 'none'")
      assert.strictEqual(answer.headers.get("x-frame-options"), "DENY")
    }).pipe(Effect.scoped)
  )

  it.live("sends the page up to its first answer before that answer is made", () =>
    Effect.gen(function* () {
      const page = yield* loadPageAssets([yield* freshBuild])
      const first = signedIn("Movies/a.mkv")
      const made = yield* Deferred.make<FirstAnswer<unknown>>()
      const response = yield* page.index(get(), Deferred.await(made))
      const reader = HttpServerResponse.toWeb(response).body?.getReader()
      assert.isDefined(reader)
      const opening = yield* Effect.promise(() => reader.read())
      const head = Buffer.from(opening.value ?? []).toString("utf8")
      assert.include(head, "<style>")
      assert.include(head, '<script type="module">', "the script, to compile meanwhile")
      assert.isTrue(head.endsWith(`<script type="application/json" id="${FIRST_ANSWER_ID}">`))
      yield* Deferred.succeed(made, first)
      const chunks = [Buffer.from(opening.value ?? [])]
      for (;;) {
        const next = yield* Effect.promise(() => reader.read())
        if (next.done) break
        chunks.push(Buffer.from(next.value))
      }
      const whole = yield* serve(page, get(), first)
      assert.isTrue(Buffer.concat(chunks).equals(whole.body))
    }).pipe(Effect.scoped)
  )

  it.live("answers gzip with the same page, for any first answer", () =>
    Effect.gen(function* () {
      const page = yield* loadPageAssets([yield* freshBuild])
      const many = Array.from({ length: 5000 }, (_, i) => `Folder ${i % 7}/file-${i}.mkv`)
      for (const first of [
        signedIn(HOSTILE_NAME),
        { loginRequired: true, signedIn: false, status: null },
        { loginRequired: false, signedIn: true, status: { locallyDeleted: many } }
      ]) {
        const plain = yield* serve(page, get(), first)
        const zipped = yield* serve(page, get({ "accept-encoding": "gzip, deflate, br" }), first)
        assert.isNull(plain.headers.get("content-encoding"))
        assert.strictEqual(zipped.headers.get("content-encoding"), "gzip")
        assert.isBelow(zipped.body.length, plain.body.length)
        assert.isTrue(Zlib.gunzipSync(zipped.body).equals(plain.body))
      }
    }).pipe(Effect.scoped)
  )

  it.live("keeps serving the page made at start after a build replaced it on disk", () =>
    Effect.gen(function* () {
      const out = yield* freshBuild
      const page = yield* loadPageAssets([out])
      const first = signedIn("Movies/a.mkv")
      const before = yield* serve(page, get(), first)
      // What a build of other sources leaves: an index naming other assets, the old ones gone.
      const index = Path.join(out, "index.html")
      Fs.writeFileSync(index, Fs.readFileSync(index, "utf8").replaceAll(/assets\/(main|page)-\w+/g, "assets/$1-NEW"))
      for (const name of Fs.readdirSync(Path.join(out, "assets"))) Fs.rmSync(Path.join(out, "assets", name))
      const after = yield* serve(page, get(), first)
      assert.isTrue(after.body.equals(before.body), "the page made at start")
      assert.strictEqual(after.headers.get("content-security-policy"), before.headers.get("content-security-policy"))
    }).pipe(Effect.scoped)
  )

  it.live("refuses a build whose script would end its own tag, with one line", () =>
    Effect.gen(function* () {
      const out = yield* freshBuild
      const [script = ""] = Fs.readdirSync(Path.join(out, "assets")).filter((name) => name.endsWith(".js"))
      Fs.appendFileSync(Path.join(out, "assets", script), '\nconsole.log("</script>")\n')
      const page = yield* loadPageAssets([out])
      const answer = yield* serve(page, get(), signedIn("a"))
      assert.strictEqual(answer.status, 503)
      assert.strictEqual(
        answer.body.toString(),
        "the web page's build is broken: run `npm run build` where dlsync is installed\n"
      )
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
