/**
 * The one HTTP client for what dlsync sends to others than the service: media servers,
 * notification targets, the *arr apps, poster images, .torrent links. The service's own
 * client is api/ (its credentials never come here).
 *
 * Contract:
 * - One exchange: the request out, the body in as it streams, failing as `too-large` the
 *   moment it passes `maxBytes` (declared or received), all within `timeoutMs` (Effect's
 *   Clock); interruption aborts the request.
 * - Redirects are followed only when asked (`redirects`, GET only), to http(s) URLs only; a
 *   redirect elsewhere (a `magnet:` link) or past the count is the answer. Headers go to a
 *   redirect's target only on the same origin.
 * - Every failure is one line that names how far the exchange got and holds no secret.
 *   `errorSnippet` gives the start of an error answer for a log line: scrubbed of all the
 *   request carried (a server may echo its path, query and headers), on one line, cut.
 * - Node's http and https clients, through their global keep-alive agents (an idle socket
 *   is closed after 5 s and never holds the process); undici is not loaded (its entry
 *   costs ≈ 11 MB of RSS).
 */
import type * as Http from "node:http"
import { Context, Data, Duration, Effect, Layer, Redacted } from "effect"
import { errnoCode } from "../fs/errno.ts"
import { makeScrubber } from "../log/Scrubber.ts"
import { urlSecrets } from "../log/urlSecrets.ts"
import { NodeHttp } from "../server/nodeHttp.ts"

const NodeHttps = process.getBuiltinModule("node:https")

export interface OutboundRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly url: URL
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
  /** The whole exchange, redirects and body included. */
  readonly timeoutMs: number
  /** A longer body fails as `too-large`, without being read further. */
  readonly maxBytes: number
  /** Redirects followed (GET only); none unless given. */
  readonly redirects?: number
}

export interface OutboundAnswer {
  readonly status: number
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  /** Where the answer came from (after the redirects followed). */
  readonly url: URL
}

/** The exchange did not end with an answer: `reason` is one line without a secret. */
export class OutboundFailure extends Data.TaggedError("OutboundFailure")<{
  readonly stage: "invalid" | "connect" | "body" | "timeout" | "too-large"
  readonly reason: string
  /** The system's error code (ECONNREFUSED, ENOTFOUND…), when there is one. */
  readonly code: string | undefined
}> {}

export class Outbound extends Context.Service<
  Outbound,
  { readonly send: (request: OutboundRequest) => Effect.Effect<OutboundAnswer, OutboundFailure> }
>()("dlsync/outbound/Outbound") {
  /** Node's http and https clients. */
  static readonly layer: Layer.Layer<Outbound> = Layer.succeed(
    Outbound,
    Outbound.of({ send: (request) => send(request) })
  )
}

/** A GET of a public URL (a poster, a .torrent link): no header but Accept, its redirects followed. */
export const fetchPublic = Effect.fnUntraced(function* (
  url: string,
  options: Pick<OutboundRequest, "timeoutMs" | "maxBytes" | "redirects"> & { readonly accept: string }
): Effect.fn.Return<OutboundAnswer, OutboundFailure, Outbound> {
  if (!URL.canParse(url)) {
    return yield* new OutboundFailure({ stage: "invalid", reason: "not a URL", code: undefined })
  }
  const client = yield* Outbound
  const { accept, ...bounds } = options
  return yield* client.send({ method: "GET", url: new URL(url), headers: { accept }, ...bounds })
})

/** The answer's body as UTF-8 text. */
export const answerText = (answer: OutboundAnswer): string => Buffer.from(answer.body).toString("utf8")

/** Characters of an error answer kept for a log line. */
export const SNIPPET_CHARS = 300

/**
 * The start of an error answer for a log line: `: <text>`, or "" when it has none. What the
 * request carried (URL parts, header values) is scrubbed first, then the text is made one
 * line and cut, so no cut can leave part of a secret.
 */
export const errorSnippet = (request: OutboundRequest, answer: OutboundAnswer): string => {
  const carried = [
    ...urlSecrets(request.url.href, { wholePath: true }),
    ...urlSecrets(answer.url.href, { wholePath: true }),
    ...Object.values(request.headers)
  ]
  const scrubbed = makeScrubber({ secrets: carried.map((s) => Redacted.make(s)) }).text(answerText(answer))
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters become spaces
  const line = scrubbed.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim()
  if (line === "") return ""
  return `: ${line.length > SNIPPET_CHARS ? `${line.slice(0, SNIPPET_CHARS)}…` : line}`
}

// ---------------------------------------------------------------------------------------

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

const send = (request: OutboundRequest): Effect.Effect<OutboundAnswer, OutboundFailure> =>
  Effect.gen(function* () {
    let url = request.url
    let headers = request.headers
    for (let hop = 0; ; hop++) {
      const answer = yield* exchange(request, url, headers)
      const location = answer.headers.location
      if (request.method !== "GET" || hop >= (request.redirects ?? 0) || !REDIRECTS.has(answer.status)) return answer
      if (location === undefined || !URL.canParse(location, url.href)) return answer
      const next = new URL(location, url)
      if (next.protocol !== "http:" && next.protocol !== "https:") return answer
      if (next.origin !== url.origin) headers = {}
      url = next
    }
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(request.timeoutMs),
      orElse: () =>
        Effect.fail(
          new OutboundFailure({
            stage: "timeout",
            reason: `no answer within ${Duration.format(Duration.millis(request.timeoutMs))}`,
            code: undefined
          })
        )
    })
  )

/** One request and its answer; interruption destroys the request. */
const exchange = (
  request: OutboundRequest,
  url: URL,
  headers: Readonly<Record<string, string>>
): Effect.Effect<OutboundAnswer, OutboundFailure> =>
  Effect.callback<OutboundAnswer, OutboundFailure>((resume) => {
    let settled = false
    let answered = false
    let req: Http.ClientRequest | undefined
    const settle = (outcome: Effect.Effect<OutboundAnswer, OutboundFailure>) => {
      if (settled) return
      settled = true
      resume(outcome)
    }
    const fail = (stage: OutboundFailure["stage"], reason: string, error?: unknown) => {
      const code = errnoCode(error)
      settle(
        Effect.fail(new OutboundFailure({ stage, reason: code === undefined ? reason : `${reason} (${code})`, code }))
      )
      req?.destroy()
    }
    const tooLarge = () => fail("too-large", `the answer is larger than ${request.maxBytes} bytes`)
    try {
      const https = url.protocol === "https:"
      if (!https && url.protocol !== "http:") throw new Error(`${url.protocol} is not http(s)`)
      req = (https ? NodeHttps : NodeHttp).request(url, { method: request.method, headers })
    } catch (error) {
      fail("invalid", `cannot send the request: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    req.on("error", (error) =>
      answered ? fail("body", "the answer broke off", error) : fail("connect", connectProblem(error), error)
    )
    req.on("response", (res) => {
      answered = true
      if (Number(res.headers["content-length"] ?? 0) > request.maxBytes) return tooLarge()
      const chunks: Array<Buffer> = []
      let size = 0
      res.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > request.maxBytes) tooLarge()
        else chunks.push(chunk)
      })
      res.on("end", () => {
        // Node ends a body cut short by the peer as "aborted", then "end": not an answer.
        if (!res.complete) return fail("body", "the connection closed inside the answer")
        settle(
          Effect.succeed({
            status: res.statusCode ?? 0,
            headers: flatten(res.headersDistinct),
            body: Buffer.concat(chunks),
            url
          })
        )
      })
      res.on("error", (error) => fail("body", "the answer broke off", error))
    })
    req.end(request.body)
    return Effect.sync(() => {
      settled = true
      req?.destroy()
    })
  })

const connectProblem = (error: unknown): string => {
  switch (errnoCode(error)) {
    case "ECONNREFUSED":
      return "connection refused"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "unknown host"
    default:
      return "cannot connect"
  }
}

const flatten = (headers: Record<string, ReadonlyArray<string> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = value.join(", ")
  }
  return out
}
