/**
 * The web page in Chromium against the real daemon (`dlsync run`, on loopback) and the
 * emulator: it loads with no console error, a transfer shows and ends live (pushed, not
 * polled), a held deletion confirmed from the page goes to the trash, a failed file is
 * retried, a selection is answered, a magnet added from the page completes (and is removed,
 * its files kept), a cross-site POST is refused, and at 360 px nothing scrolls sideways.
 * One daemon for the file; the tests run in order and each waits on what it needs.
 * Screenshots: test-results/web/.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Page, Request } from "playwright-core"
import { eventually, type Sandbox, sandbox, seedMany, seedSmallLibrary, waitUntil } from "../integration/harness.ts"
import {
  type Browsing,
  chromiumMissing,
  type Daemon,
  ensurePageBuilt,
  openBrowser,
  openView,
  screenshot,
  startDaemon
} from "./pageHarness.ts"

const VIEWS = ["Overview", "Transfers", "Releases", "Problems", "Activity"] as const

const BULK_FILES = 30

let box: Sandbox
let daemon: Daemon
let browsing: Browsing
let bulkFolder: string

/** Files below `dir`, however deep. */
const filesBelow = (dir: string): Array<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => Path.join(e.parentPath, e.name))
    : []

/** The page's GET /api/status requests so far. */
const statusReads: Array<string> = []

const suite = describe.skipIf(chromiumMissing !== undefined)

// A test's own waits (a release to complete, a held deletion to show) take up to a minute on a busy machine.
suite(`the web page in Chromium${chromiumMissing === undefined ? "" : ` (skipped: ${chromiumMissing})`}`, {
  timeout: 120_000
}, () => {
  beforeAll(async () => {
    await ensurePageBuilt()
    box = await sandbox()
    seedSmallLibrary(box.emu)
    bulkFolder = seedMany(box.emu, "bulk", BULK_FILES)
    const blocked = box.emu.control.addFolder({ name: "Blocked", parentId: null })
    box.emu.control.addFile({ name: "stuck.bin", parentId: blocked.id, sizeBytes: 2_000 })
    // A file of the user's where the remote folder goes: the folder and its file fail until it moves.
    Fs.writeFileSync(Path.join(box.root, "Blocked"), "the user's own file")
    const timings = await fetch(`${box.emu.controlUrl}/downloads/timings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ processing_ms: 100, downloading_ms: 300, finalizing_ms: 100 })
    })
    assert.strictEqual(timings.status, 204)
    const configDir = Path.join(box.dir, "config", "dlsync")
    Fs.mkdirSync(configDir, { recursive: true })
    // No glob matches: a release of this category waits for the user's choice.
    Fs.writeFileSync(Path.join(configDir, "config.toml"), '[categories.picky]\nselection = ["*.nomatch"]\n')
    // Polls an hour apart: only the page's buttons (and the first pass) start a pass.
    daemon = await startDaemon(box, { DLSYNC_SYNC_POLL_INTERVAL: "1h", DLSYNC_MIRROR_MAX_DELETE: "10" })
    await waitUntil(() => filesBelow(Path.join(box.root, "bulk")).length === BULK_FILES, 30_000, "the first pass")
    browsing = await openBrowser()
    browsing.page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/api/status") statusReads.push(request.url())
    })
  }, 90_000)

  afterAll(async () => {
    await browsing?.close()
    await daemon?.stop()
    await box?.close()
  })

  it("loads every view with no console error and the strict headers", async () => {
    const { page, problems } = browsing
    const asked: Array<string> = []
    const ask = (request: Request) => asked.push(new URL(request.url()).pathname)
    page.on("request", ask)
    const answer = await page.goto(daemon.url)
    assert.strictEqual(answer?.status(), 200)
    const headers = answer?.headers() ?? {}
    assert.match(headers["content-security-policy"] ?? "", /script-src 'sha256-[^']+';/)
    assert.strictEqual(headers["x-frame-options"], "DENY")
    assert.strictEqual(headers["content-encoding"], "gzip")
    await page.getByRole("main", { name: "Overview" }).getByText("Mirror size").waitFor()
    page.off("request", ask)
    assert.deepStrictEqual(
      asked.filter((path) => path !== "/api/events"),
      ["/"],
      "the overview rendered from the page alone"
    )
    await page.getByText("live", { exact: true }).waitFor()
    for (const view of VIEWS) {
      await openView(page, view)
      await screenshot(page, `desktop-${view.toLowerCase()}`)
    }
    await page.emulateMedia({ colorScheme: "dark" })
    await openView(page, "Overview")
    await screenshot(page, "desktop-overview-dark")
    await page.emulateMedia({ colorScheme: "light" })
    assert.deepStrictEqual(problems, [])
  })

  it("is used by keyboard: Tab reaches the views' links, Enter opens one", async () => {
    const { page } = browsing
    await page.goto(`${daemon.url}/#overview`)
    await page.getByRole("main", { name: "Overview" }).waitFor()
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press("Tab")
      if ((await page.evaluate("document.activeElement?.textContent")) === "Releases") break
    }
    await page.keyboard.press("Enter")
    await page.getByRole("main", { name: "Releases" }).waitFor()
  })

  it("shows a transfer as it happens, pushed over the event stream, and its end", async () => {
    const { page } = browsing
    await page.goto(`${daemon.url}/#transfers`)
    await page.getByRole("main", { name: "Transfers" }).waitFor()
    box.emu.control.setCdnRatePerConnection(128 * 1024)
    const movies = [...box.emu.state.primaryUser.tree.values()].find((i) => i.name === "Movies")
    box.emu.control.addFile({ name: "slow.mkv", parentId: movies?.id ?? null, sizeBytes: 800_000 })
    await page.getByRole("button", { name: "Sync now" }).click()
    const card = page
      .getByRole("list", { name: "Active transfers" })
      .getByRole("listitem")
      .filter({ hasText: "slow.mkv" })
    await card.waitFor({ timeout: 30_000 })
    const readsBefore = statusReads.length
    const first = await card.locator(".meta").textContent()
    // The next progress the daemon pushes changes the card's bytes.
    await eventually(async () => (await card.locator(".meta").textContent()) !== first, "the next progress")
    assert.strictEqual(statusReads.length, readsBefore, "the progress came over the event stream, not a poll")
    box.emu.control.setCdnRatePerConnection(null)
    await card.waitFor({ state: "detached", timeout: 60_000 })
    assert.strictEqual(Fs.statSync(Path.join(box.root, "Movies", "slow.mkv")).size, 800_000)
    await openView(page, "Activity")
    await page.getByText("Landed Movies/slow.mkv").waitFor()
  })

  it("retries a failed file", async () => {
    const { page } = browsing
    await page.goto(`${daemon.url}/#problems`)
    // The folder could not be placed (the user's file holds its name), so neither could its file.
    const retry = page.getByRole("button", { name: "Retry Blocked", exact: true })
    await retry.waitFor()
    await screenshot(page, "desktop-problems-failed")
    Fs.rmSync(Path.join(box.root, "Blocked"))
    await retry.click()
    await page.getByText("Retrying Blocked.").waitFor()
    await waitUntil(() => Fs.existsSync(Path.join(box.root, "Blocked", "stuck.bin")), 30_000, "the retried file")
    await retry.waitFor({ state: "detached" })
  })

  it("confirms a held deletion: the files go to the trash", async () => {
    const { page } = browsing
    box.emu.control.remove([bulkFolder])
    await page.goto(`${daemon.url}/#problems`)
    await page.getByRole("button", { name: "Sync now" }).click()
    const confirm = page.getByRole("button", { name: `Confirm deletion of ${BULK_FILES} file(s)` })
    await confirm.waitFor({ timeout: 30_000 })
    assert.strictEqual(filesBelow(Path.join(box.root, "bulk")).length, BULK_FILES, "held: nothing removed yet")
    await screenshot(page, "desktop-problems-held")
    await confirm.click()
    await waitUntil(() => filesBelow(Path.join(box.root, "bulk")).length === 0, 30_000, "the deletion")
    const trashed = filesBelow(Path.join(box.root, ".dlsync", "trash")).filter((f) => f.includes("file-"))
    assert.strictEqual(trashed.length, BULK_FILES)
    await page.getByText("No deletion is held.").waitFor()
  })

  it("adds a magnet from the page and follows it to complete", async () => {
    const { page } = browsing
    await page.goto(`${daemon.url}/#releases`)
    await addRelease(
      page,
      "magnet:?xt=urn:btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a&dn=Page.Added&xl=200000",
      "web"
    )
    const card = page.locator("li.release").filter({ hasText: "Page.Added" })
    await card.locator(".phase", { hasText: "complete" }).waitFor({ timeout: 60_000 })
    const landed = filesBelow(Path.join(box.root, "web", "Page.Added"))
    assert.isAbove(landed.length, 0)
    // Removed from the queue, its files kept (as an app's "remove" without "delete files").
    await card.getByRole("button", { name: "Remove…" }).click()
    await card.getByRole("button", { name: "Remove, keep files" }).click()
    await card.waitFor({ state: "detached" })
    assert.deepStrictEqual(filesBelow(Path.join(box.root, "web", "Page.Added")), landed)
  })

  it("answers a selection from the page", async () => {
    const { page } = browsing
    await page.goto(`${daemon.url}/#releases`)
    await addRelease(
      page,
      "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=Pick.select&xl=300000",
      "picky"
    )
    const card = page.locator("li.release").filter({ hasText: "Pick.select" })
    const choice = card.getByRole("group", { name: /Choose one/ })
    await choice.waitFor({ timeout: 30_000 })
    await screenshot(page, "desktop-releases-choice")
    const offered = choice.getByRole("button").first()
    const name = ((await offered.textContent()) ?? "").replace(/ \(.*\)$/, "")
    await offered.click()
    await card.locator(".phase", { hasText: "complete" }).waitFor({ timeout: 60_000 })
    assert.isTrue(
      filesBelow(Path.join(box.root, "picky")).some((f) => Path.basename(f) === name),
      `${name} under picky/`
    )
  })

  it("refuses a POST sent by another site's page", async () => {
    const { page } = browsing
    const other = Http.createServer((request, response) => {
      // The browser may ask this site for its icon too.
      if (request.url !== "/") return void response.writeHead(204).end()
      response.setHeader("content-type", "text/html")
      response.end(
        `<link rel="icon" href="data:,"><form method="post" action="${daemon.url}/api/sync"><button>go</button></form>`
      )
    })
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve))
    try {
      const address = other.address()
      const port = address !== null && typeof address === "object" ? address.port : 0
      // Another origin (a port is an origin of its own), as any web page the user visits.
      await page.goto(`http://localhost:${port}/`)
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${daemon.url}/api/sync`),
        page.getByRole("button", { name: "go" }).click()
      ])
      assert.strictEqual(answer.status(), 403)
      assert.include(await answer.text(), "cross-site")
      // The browser reports the refusal in the console: the one error this test expects.
      assert.deepStrictEqual(browsing.problems.splice(0), ["403 /api/sync"])
    } finally {
      other.close()
    }
  })

  it("fits a 360 px wide phone: nothing scrolls sideways", async () => {
    const { page } = browsing
    await page.setViewportSize({ width: 360, height: 740 })
    await page.goto(daemon.url)
    for (const view of VIEWS) {
      await openView(page, view)
      const widths = await page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
      assert.isArray(widths)
      const [scroll, client] = Array.isArray(widths) ? widths : []
      assert.isAtMost(client, 360)
      assert.isAtMost(scroll, client, `${view} at 360 px`)
      await screenshot(page, `phone-${view.toLowerCase()}`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    assert.deepStrictEqual(browsing.problems, [])
  })
})

const addRelease = async (page: Page, source: string, category: string) => {
  await page.getByLabel("Magnet link or URL").fill(source)
  await page.getByLabel("Category").fill(category)
  await page.getByRole("button", { name: "Add", exact: true }).click()
  await page.getByText("Release added.").waitFor()
}
