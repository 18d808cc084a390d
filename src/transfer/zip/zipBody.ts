/**
 * The GET of a ZIP link, its body read chunk by chunk as the reader asks (the socket pauses
 * in between: the archive is never held whole). Like every CDN request it carries no
 * credential (Host, User-Agent and Accept-Encoding: identity only) and follows at most
 * `maxRedirects` redirects here; a body that sends nothing for `idleTimeoutMs` is cut.
 * Closing the scope destroys the request.
 */
import type * as Http from "node:http"
import { Effect, Schema, type Scope } from "effect"
import { NodeHttp } from "../../server/nodeHttp.ts"

const NodeHttps = process.getBuiltinModule("node:https")

export class ZipFetchError extends Schema.TaggedError<ZipFetchError>()("ZipFetchError", {
  message: Schema.String,
  /** The answer's status, when there was one. */
  status: Schema.optionalKey(Schema.Number)
}) {}

export interface ZipBody {
  /** The next bytes of the body; undefined once it is complete. */
  readonly read: Effect.Effect<Buffer | undefined, ZipFetchError>
}

export interface ZipAgents {
  readonly http: Http.Agent
  readonly https: Http.Agent
}

export interface ZipGetOptions {
  readonly userAgent: string
  readonly maxRedirects: number
  readonly idleTimeoutMs: number
}

export const makeZipAgents = (): ZipAgents => ({
  http: new NodeHttp.Agent({ keepAlive: true }),
  https: new NodeHttps.Agent({ keepAlive: true })
})

export const openZipBody = (
  agents: ZipAgents,
  url: string,
  options: ZipGetOptions
): Effect.Effect<ZipBody, ZipFetchError, Scope.Scope> =>
  Effect.gen(function* () {
    let target = url
    for (let redirects = 0; ; redirects++) {
      const response = yield* Effect.acquireRelease(get(agents, target, options), (r) => Effect.sync(() => r.destroy()))
      const status = response.statusCode ?? 0
      const location = response.headers.location
      if (REDIRECTS.has(status) && location !== undefined) {
        response.resume()
        if (redirects >= options.maxRedirects) {
          return yield* new ZipFetchError({ message: `more than ${options.maxRedirects} redirects`, status })
        }
        target = new URL(location, target).toString()
        continue
      }
      if (status !== 200) {
        response.resume()
        return yield* new ZipFetchError({ message: `the archive's link answered HTTP ${status}`, status })
      }
      const chunks = response[Symbol.asyncIterator]()
      return {
        read: Effect.tryPromise({
          try: () => chunks.next(),
          catch: (e) => new ZipFetchError({ message: `reading the archive: ${message(e)}` })
        }).pipe(
          Effect.flatMap((next) =>
            next.done === true
              ? response.complete
                ? Effect.succeed(undefined)
                : Effect.fail(new ZipFetchError({ message: "the archive's body ended early" }))
              : Buffer.isBuffer(next.value)
                ? Effect.succeed(next.value)
                : Effect.fail(new ZipFetchError({ message: "the archive's body is not bytes" }))
          )
        )
      } satisfies ZipBody
    }
  })

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

const get = (agents: ZipAgents, url: string, options: ZipGetOptions) =>
  Effect.callback<Http.IncomingMessage, ZipFetchError>((resume) => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      resume(Effect.fail(new ZipFetchError({ message: "the archive's link is not a URL" })))
      return
    }
    const secure = parsed.protocol === "https:"
    if (!secure && parsed.protocol !== "http:") {
      resume(Effect.fail(new ZipFetchError({ message: `the archive's link is ${parsed.protocol}, not http(s)` })))
      return
    }
    const request = (secure ? NodeHttps : NodeHttp).request(parsed, {
      method: "GET",
      agent: secure ? agents.https : agents.http,
      headers: { "user-agent": options.userAgent, "accept-encoding": "identity" }
    })
    request.setTimeout(options.idleTimeoutMs, () =>
      request.destroy(new Error(`nothing arrived for ${Math.round(options.idleTimeoutMs / 1000)} s`))
    )
    request.once("response", (response) => resume(Effect.succeed(response)))
    request.once("error", (e) =>
      resume(Effect.fail(new ZipFetchError({ message: `requesting the archive: ${message(e)}` })))
    )
    request.end()
    return Effect.sync(() => request.destroy())
  })

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))
