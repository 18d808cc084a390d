/**
 * The web page beyond loopback (`server.listen = "0.0.0.0:…"`), the real daemon with the
 * password it generated and printed once: every request but the probes and the page's
 * own files needs a sign-in, also over 127.0.0.1 (a proxy on the host looks local), and the
 * page carries data only for a visitor signed in; the page asks for the password and opens a
 * session (an HttpOnly, SameSite=Strict cookie); sign-out ends it; wrong passwords from one
 * address are banned (429). One daemon for the file.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox, seedSmallLibrary, waitUntil } from "../integration/harness.ts"
import {
  type Browsing,
  chromiumMissing,
  csrfToken,
  type Daemon,
  ensurePageBuilt,
  firstAnswerBesideStatus,
  firstAnswerOf,
  openBrowser,
  screenshot,
  startDaemon
} from "./pageHarness.ts"

let box: Sandbox
let daemon: Daemon
let password = ""

const PRINTED = /^dlsync web page password \(shown this once, kept hashed in .*\): (\S+)$/m

const basic = (secret: string) => `Basic ${Buffer.from(`any:${secret}`).toString("base64")}`

beforeAll(async () => {
  await ensurePageBuilt()
  box = await sandbox()
  seedSmallLibrary(box.emu)
  daemon = await startDaemon(box, {}, "0.0.0.0")
  await waitUntil(() => PRINTED.test(daemon.process.output().stdout), 15_000, "the generated password")
  password = PRINTED.exec(daemon.process.output().stdout)?.[1] ?? ""
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await box?.close()
})

describe("the web page beyond loopback", () => {
  it("needs a sign-in for the API and /metrics, over 127.0.0.1 too; the probes and the page's files need none", async () => {
    for (const path of ["/api/status", "/api/events", "/api/config", "/metrics"]) {
      assert.strictEqual((await fetch(`${daemon.url}${path}`)).status, 401, path)
    }
    assert.strictEqual((await fetch(`${daemon.url}/healthz`)).status, 200)
    assert.strictEqual((await fetch(`${daemon.url}/`)).status, 200)
    const session = await (await fetch(`${daemon.url}/api/session`)).json()
    assert.deepInclude(session, { loginRequired: true, signedIn: false })
    assert.strictEqual(
      (await fetch(`${daemon.url}/api/status`, { headers: { authorization: basic(password) } })).status,
      200,
      "the password itself (scripts, Prometheus)"
    )
    // Signed in by Basic, a write still needs the token.
    const sync = await fetch(`${daemon.url}/api/sync`, { method: "POST", headers: { authorization: basic(password) } })
    assert.strictEqual(sync.status, 403)
    // The password is printed once, never logged.
    assert.notInclude(daemon.process.output().stderr, password)
  })

  it("puts no data in the page of a visitor not signed in; the document in that of one who is", async () => {
    assert.deepStrictEqual(await firstAnswerOf(daemon.url), { loginRequired: true, signedIn: false, status: null })
    const headers = { authorization: basic(password) }
    const { first, status } = await firstAnswerBesideStatus(daemon.url, headers)
    assert.deepStrictEqual(first, { loginRequired: true, signedIn: true, status })
    assert.strictEqual(Object(status).root, box.root)
  })

  describe.skipIf(chromiumMissing !== undefined)(
    `in Chromium${chromiumMissing === undefined ? "" : ` (skipped: ${chromiumMissing})`}`,
    () => {
      let browsing: Browsing
      beforeAll(async () => {
        browsing = await openBrowser()
      })
      afterAll(async () => {
        await browsing?.close()
      })

      it("asks for the password, signs in with a strict cookie, and signs out", async () => {
        const { page, context } = browsing
        await page.goto(daemon.url)
        const field = page.getByLabel("Password")
        await field.waitFor()
        await screenshot(page, "desktop-login")
        await field.fill("not the password")
        await page.getByRole("button", { name: "Sign in" }).click()
        await page.getByRole("alert").filter({ hasText: "wrong password" }).waitFor()
        await field.fill(password)
        await page.getByRole("button", { name: "Sign in" }).click()
        await page.getByRole("main", { name: "Overview" }).getByText("Mirror size").waitFor()
        const [cookie] = await context.cookies()
        assert.strictEqual(cookie?.name, "dlsync_session")
        assert.isTrue(cookie?.httpOnly)
        assert.strictEqual(cookie?.sameSite, "Strict")
        await page.reload()
        await page.getByRole("main", { name: "Overview" }).getByText("Mirror size").waitFor()
        await page.getByRole("button", { name: "Sign out" }).click()
        await field.waitFor()
        // The wrong password's 401 is the one error the browser reports.
        assert.deepStrictEqual(browsing.problems, ["401 /api/login"])
      })
    }
  )

  it("bans an address after five different wrong passwords: even the right one is refused then", async () => {
    const token = await csrfToken(daemon.url)
    const attempt = (secret: string) =>
      fetch(`${daemon.url}/api/login`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": token },
        body: JSON.stringify({ password: secret })
      })
    // A sign-in that works clears the address's count: this one starts at zero.
    assert.strictEqual((await attempt(password)).status, 200)
    const answers: Array<number> = []
    for (let i = 0; i < 5; i++) answers.push((await attempt(`wrong ${i}`)).status)
    assert.deepStrictEqual(answers, [401, 401, 401, 401, 429])
    assert.strictEqual((await attempt(password)).status, 429)
    assert.strictEqual(
      (await fetch(`${daemon.url}/api/status`, { headers: { authorization: basic(password) } })).status,
      429
    )
  })
})
