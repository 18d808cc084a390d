/**
 * Small stand-in HTTP servers on 127.0.0.1 that record every request and answer as the
 * documented APIs do: Jellyfin/Emby (`POST /Library/Media/Updated`), Plex (`GET
 * /library/sections`, `GET /library/sections/{id}/refresh?path=`), ntfy (`POST /{topic}`),
 * Discord (`POST /api/webhooks/{id}/{token}`), the Apprise API (`POST /notify/{key}`) and a
 * generic Standard Webhooks receiver verified with the `standardwebhooks` library.
 * Waits are on the number of requests received, never on sleeps.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { type Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"

export interface Recorded {
  readonly method: string
  readonly url: URL
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

export interface Answer {
  readonly status: number
  readonly body?: string
  readonly contentType?: string
}

export interface StandIn {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Resolves once `count` requests were received. */
  readonly received: (count: number) => Promise<void>
}

/** Requests a stand-in of this process has begun to receive and not yet finished answering. */
let open = 0

export const startStandIn = (respond: (request: Recorded) => Answer): Promise<StandIn & { close(): Promise<void> }> =>
  new Promise((resolve) => {
    const requests: Array<Recorded> = []
    const waiters: Array<{ count: number; done: () => void }> = []
    const server = Http.createServer((req, res) => {
      open += 1
      res.once("close", () => {
        open -= 1
      })
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const recorded: Recorded = {
          method: req.method ?? "",
          url: new URL(req.url ?? "/", "http://127.0.0.1"),
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8")
        }
        const answer = respond(recorded)
        requests.push(recorded)
        res.writeHead(answer.status, { "content-type": answer.contentType ?? "application/json" })
        res.end(answer.body ?? "")
        for (const w of waiters.filter((w) => requests.length >= w.count)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.done()
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        received: (count) =>
          requests.length >= count ? Promise.resolve() : new Promise((done) => waiters.push({ count, done })),
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** A stand-in for the scope's life. */
export const standIn = (respond: (request: Recorded) => Answer) =>
  Effect.acquireRelease(
    Effect.promise(() => startStandIn(respond)),
    (s) => Effect.promise(() => s.close())
  )

const json = (status: number, value: unknown): Answer => ({ status, body: JSON.stringify(value) })

/** Jellyfin/Emby: the API key in `X-Emby-Token` or `Authorization: MediaBrowser Token="…"`; 204 on a valid body. */
export const jellyfin =
  (apiKey: string) =>
  (r: Recorded): Answer => {
    const token = r.headers["x-emby-token"] ?? /Token="([^"]*)"/.exec(String(r.headers.authorization ?? ""))?.[1]
    if (token !== apiKey) return { status: 401 }
    if (r.method !== "POST" || r.url.pathname !== "/Library/Media/Updated") return { status: 404 }
    const body: unknown = JSON.parse(r.body || "null")
    const updates = (body as { Updates?: unknown } | null)?.Updates
    const valid =
      Array.isArray(updates) &&
      updates.every(
        (u: { Path?: unknown; UpdateType?: unknown }) =>
          typeof u.Path === "string" && ["Created", "Modified", "Deleted"].includes(String(u.UpdateType))
      )
    return valid ? { status: 204 } : { status: 400 }
  }

export interface PlexSectionStandIn {
  readonly key: string
  readonly title: string
  readonly paths: ReadonlyArray<string>
}

/** Plex: `X-Plex-Token` required; sections as JSON with Accept: application/json, else XML. */
export const plex =
  (token: string, sections: ReadonlyArray<PlexSectionStandIn>) =>
  (r: Recorded): Answer => {
    if ((r.headers["x-plex-token"] ?? r.url.searchParams.get("X-Plex-Token")) !== token) return { status: 401 }
    if (r.method !== "GET") return { status: 405 }
    if (r.url.pathname === "/library/sections") {
      if (String(r.headers.accept).includes("application/json")) {
        return json(200, {
          MediaContainer: {
            size: sections.length,
            Directory: sections.map((s) => ({
              key: s.key,
              title: s.title,
              type: "movie",
              Location: s.paths.map((path, i) => ({ id: i + 1, path }))
            }))
          }
        })
      }
      const xml = sections
        .map(
          (s) =>
            `<Directory key="${s.key}" title="${s.title}">${s.paths.map((p) => `<Location path="${p}"/>`).join("")}</Directory>`
        )
        .join("")
      return { status: 200, contentType: "application/xml", body: `<MediaContainer>${xml}</MediaContainer>` }
    }
    const refresh = /^\/library\/sections\/([^/]+)\/refresh$/.exec(r.url.pathname)
    if (refresh !== null) {
      return sections.some((s) => s.key === refresh[1]) ? { status: 200 } : { status: 404 }
    }
    return { status: 404 }
  }

/** ntfy: `POST /{topic}`, the message as the body. */
export const ntfy = (r: Recorded): Answer =>
  r.method === "POST" && /^\/[\w-]{1,64}$/.test(r.url.pathname)
    ? json(200, { id: "m1", event: "message", topic: r.url.pathname.slice(1), message: r.body })
    : json(400, { code: 40001, error: "bad request" })

/** Discord: `POST /api/webhooks/{id}/{token}` with `content` of at most 2000 characters; 204. */
export const discord = (r: Recorded): Answer => {
  if (r.method !== "POST" || !/^\/api\/webhooks\/\d+\/[\w-]+$/.test(r.url.pathname)) return json(404, {})
  const body = JSON.parse(r.body) as { content?: unknown }
  return typeof body.content === "string" && body.content.length > 0 && body.content.length <= 2000
    ? { status: 204 }
    : json(400, { message: "Invalid Form Body", code: 50035 })
}

/** Apprise API: `POST /notify/{key}` with a JSON `body`. */
export const apprise = (r: Recorded): Answer => {
  if (r.method !== "POST" || !/^\/notify(\/[\w-]+)?\/?$/.test(r.url.pathname)) return { status: 404 }
  const body = JSON.parse(r.body) as { body?: unknown }
  return typeof body.body === "string" ? json(200, { success: true }) : json(400, { error: "no body" })
}

/** A generic receiver verifying each delivery with the `standardwebhooks` library. */
export const webhookReceiver =
  (secret: string, verified: Array<unknown>) =>
  (r: Recorded): Answer => {
    try {
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(r.headers)) if (typeof v === "string") headers[k] = v
      verified.push(new Webhook(secret).verify(r.body, headers))
      return { status: 204 }
    } catch {
      return { status: 400 }
    }
  }

/**
 * Advances the test clock in `step`s until `done()` holds, letting real I/O (the stand-ins'
 * answers) progress between steps: for waits, such as a retry's backoff, that start only
 * once an answer has come back. The clock never moves while a stand-in is receiving or
 * answering a request: an exchange's deadline (on the clock) must not pass because the test
 * moved time faster than the bytes. Keep `step` below the deadlines of the code under test.
 */
export const advanceUntil = (done: () => boolean, step: Duration.Input = "10 seconds") =>
  Effect.gen(function* () {
    for (let i = 0; !done(); i++) {
      if (i > 10_000) return yield* Effect.die(new Error("advanceUntil: condition never held"))
      yield* Effect.promise(() => answered())
      yield* TestClock.adjust(step)
    }
  })

/** Once no stand-in has a request open, and the event loop has had a turn to deliver the answers. */
const answered = async (): Promise<void> => {
  do await new Promise((resolve) => setTimeout(resolve, 2))
  while (open > 0)
}
