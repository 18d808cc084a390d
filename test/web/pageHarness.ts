/**
 * What the web page's tests share: the real daemon (`dlsync run`, the CLI process) against
 * the emulator (test/integration/harness.ts) with its status server on a free port, the
 * page built from the current sources (scripts/buildPage.ts, when older than they are), and
 * Debian's Chromium driven by playwright-core, every console error and failed page request
 * collected. Without /usr/bin/chromium the browser tests skip, naming the package.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { isDeepStrictEqual } from "node:util"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { buildPage, pageIsFresh } from "../../scripts/buildPage.ts"
import { FIRST_ANSWER_ID } from "../../src/web/firstAnswer.ts"
import { eventually, freePort, type Sandbox, type Spawned } from "../integration/harness.ts"

export const CHROMIUM = process.env.DLSYNC_TEST_CHROMIUM ?? "/usr/bin/chromium"

/** Why the browser tests skip here, or undefined when they run. */
export const chromiumMissing: string | undefined = Fs.existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is missing: the web page's browser tests need it (apt-get install chromium)`

/** Where the runs leave their screenshots (git-ignored). */
export const SCREENSHOTS = Path.resolve(import.meta.dirname, "../../test-results/web")

/** Builds the page when a source is newer than the build (a fresh clone's `npm ci` built it already). */
export const ensurePageBuilt = async (): Promise<void> => {
  if (!pageIsFresh()) await buildPage()
}

export interface Daemon {
  readonly url: string
  readonly process: Spawned
  readonly stop: () => Promise<void>
}

/** `dlsync run` with its status server on `host` (loopback unless given) and a free port, once it answers. */
export const startDaemon = async (
  box: Sandbox,
  env: Record<string, string> = {},
  host = "127.0.0.1"
): Promise<Daemon> => {
  const port = await freePort()
  const spawned = box.spawn(["run"], {
    env: { DLSYNC_SERVER_LISTEN: `${host}:${port}`, ...env },
    deadlineMs: 600_000
  })
  const url = `http://127.0.0.1:${port}`
  await eventually(
    async () => {
      if (spawned.child.exitCode !== null) throw new Error(`dlsync run exited: ${spawned.output().stderr}`)
      // Bounded: a request that arrives while the server's routes are still being built waits unanswered.
      return (
        (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined))?.status === 200
      )
    },
    "the daemon's status server",
    30_000,
    () => spawned.output().stderr
  )
  return {
    url,
    process: spawned,
    stop: async () => {
      if (spawned.child.exitCode === null) {
        spawned.child.kill("SIGTERM")
        await spawned.exit.catch(() => undefined)
      }
    }
  }
}

export interface Browsing {
  readonly browser: Browser
  readonly context: BrowserContext
  readonly page: Page
  /** Console errors, uncaught page errors and failed requests so far. */
  readonly problems: Array<string>
  readonly close: () => Promise<void>
}

/** Chromium, headless, with one page that records every error it meets. */
export const openBrowser = async (viewport = { width: 1280, height: 900 }): Promise<Browsing> => {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container has no user namespace for Chromium's sandbox.
    args: ["--no-sandbox", "--disable-dev-shm-usage"]
  })
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message) => {
    // A failed load is reported below with its address; the console's line names none.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      problems.push(`console: ${message.text()}`)
    }
  })
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${new URL(response.url()).pathname}`)
  })
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
  page.on("requestfailed", (request) => {
    // The event stream is cut when a page is left or closed: not an error.
    if (!request.url().endsWith("/api/events")) {
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ""}`)
    }
  })
  return {
    browser,
    context,
    page,
    problems,
    close: async () => {
      await context.close()
      await browser.close()
    }
  }
}

/** Saves a screenshot of the page as `<name>.png` in SCREENSHOTS. */
export const screenshot = async (page: Page, name: string): Promise<void> => {
  Fs.mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: Path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** Opens a view by its link in the navigation (the keyboard's way too: links). */
export const openView = async (page: Page, label: string): Promise<void> => {
  await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: label }).click()
  await page.getByRole("main", { name: label }).waitFor()
}

/** The CSRF token a page of this server reads, for the plain HTTP tests. */
export const csrfToken = async (url: string, cookie = ""): Promise<string> => {
  const response = await fetch(`${url}/api/session`, { headers: cookie === "" ? {} : { cookie } })
  const body: unknown = await response.json()
  if (typeof body !== "object" || body === null || !("csrfToken" in body) || typeof body.csrfToken !== "string") {
    throw new Error(`no CSRF token in ${JSON.stringify(body)}`)
  }
  return body.csrfToken
}

/** The first answer a page of this server carries (its data block), read from `url`'s page. */
export const firstAnswerOf = async (url: string, headers: Record<string, string> = {}): Promise<unknown> => {
  const html = await (await fetch(`${url}/`, { headers })).text()
  const data = new RegExp(`<script type="application/json" id="${FIRST_ANSWER_ID}">([^<]*)</script>`).exec(html)?.[1]
  if (data === undefined) throw new Error("the page has no data block")
  return JSON.parse(data)
}

/**
 * The page's first answer and `/api/status`, read one after the other until they agree: the
 * document holds the ages of things in whole seconds and the disk's free space, which a
 * second or another writer on the disk moves between two reads.
 */
export const firstAnswerBesideStatus = async (
  url: string,
  headers: Record<string, string> = {}
): Promise<{ readonly first: unknown; readonly status: unknown }> => {
  let last: { first: unknown; status: unknown } = { first: undefined, status: undefined }
  await eventually(
    async () => {
      const first = await firstAnswerOf(url, headers)
      const status: unknown = await (await fetch(`${url}/api/status`, { headers })).json()
      last = { first, status }
      return isDeepStrictEqual(Object(first).status, status)
    },
    "the page's document and /api/status alike",
    30_000
  )
  return last
}
