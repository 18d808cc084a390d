/**
 * The web page as the daemon serves it, made at start from the files `npm run build` leaves in
 * `dist/web/` (scripts/buildPage.ts: `index.html` naming `assets/<name>-<content hash>.js`
 * and `.css`). Nothing for a user to build; a build after the start changes nothing the
 * running daemon serves. The page is one answer, so the overview renders with no request
 * after it:
 *
 *   GET /   index.html with its style and script inline (in `<style>` and
 *           `<script type="module">`, each allowed by its hash in the page's own
 *           Content-Security-Policy: no other script or style runs), then the first answer
 *           in its data block (firstAnswer.ts); `Cache-Control: no-store`, since it holds the
 *           status of now. Everything before the data block is fixed and goes out at once,
 *           so the browser takes in the style and compiles the script while the first
 *           answer is made (the module script runs when the page has been read to its end).
 *           Gzip-encoded for a client that accepts it: the fixed parts deflated once at
 *           start, the first answer per request (gzipPieces.ts).
 *
 * The index holds the data block empty (web/index.html) and names the assets in the exact
 * tags the build writes. Where no built page is found, or one that cannot be inlined (a
 * script holding `</script` would end its own tag), the page is a one-line 503 saying what to
 * do, and the start logs why.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect, Stream } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { FIRST_ANSWER_ID, type FirstAnswer, inlineJson } from "./firstAnswer.ts"
import { deflatePiece, GZIP_HEADER, gzipTrailer } from "./gzipPieces.ts"
import { contentSecurityPolicy, securityHeaders } from "./securityHeaders.ts"

export const PAGE_DIR = "web"
const ASSETS_DIR = "assets"

/** Where web/index.html holds the first answer. */
export const DATA_SLOT = `<script type="application/json" id="${FIRST_ANSWER_ID}"></script>`

export interface PageAssets {
  /** The folder the page was made from; undefined when none could be served. */
  readonly dir: string | undefined
  /** The page with what `first` makes in it, every security header set (its own policy). */
  readonly index: (
    request: HttpServerRequest.HttpServerRequest,
    first: Effect.Effect<FirstAnswer<unknown>>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
}

/** The page of the first of `candidates` that holds a built one (the build's `dist/web`). */
export const loadPageAssets = Effect.fnUntraced(function* (candidates: ReadonlyArray<string>) {
  let dir: string | undefined
  for (const candidate of candidates) {
    if (yield* exists(Path.join(candidate, "index.html"))) {
      dir = candidate
      break
    }
  }
  if (dir === undefined) {
    yield* Effect.logWarning(`the web page is not built (looked in ${candidates.join(", ")}); run \`npm run build\``)
    return unservable("the web page is not built: run `npm run build` where dlsync is installed\n")
  }
  const root = dir
  const made = yield* Effect.promise(() => inlinePage(root))
  if (typeof made === "string") {
    yield* Effect.logError(`the web page in ${root} cannot be served: ${made}; run \`npm run build\` again`)
    return unservable("the web page's build is broken: run `npm run build` where dlsync is installed\n")
  }
  const before = yield* deflatePiece(made.before, false)
  const after = yield* deflatePiece(made.after, true)
  const opening = Buffer.concat([GZIP_HEADER, before.deflated])
  const policy = contentSecurityPolicy(made.hashes)
  const headers = { "cache-control": "no-store", vary: "accept-encoding" }

  const index = (request: HttpServerRequest.HttpServerRequest, first: Effect.Effect<FirstAnswer<unknown>>) => {
    const data = Effect.map(first, (answer) => Buffer.from(inlineJson(answer)))
    const gzip = acceptsGzip(request)
    const rest: Effect.Effect<ReadonlyArray<Uint8Array>> = gzip
      ? Effect.gen(function* () {
          const piece = yield* deflatePiece(yield* data, false)
          return [piece.deflated, after.deflated, gzipTrailer([before, piece, after])]
        })
      : Effect.map(data, (bytes) => [bytes, made.after])
    const body = Stream.concat(Stream.succeed(gzip ? opening : made.before), Stream.fromIterableEffect(rest))
    return Effect.succeed(
      securityHeaders(
        HttpServerResponse.stream(body, {
          contentType: HTML,
          headers: gzip ? { ...headers, "content-encoding": "gzip" } : headers
        }),
        policy
      )
    )
  }

  return { dir, index } satisfies PageAssets
})

// ---------------------------------------------------------------------------------------

const HTML = "text/html; charset=utf-8"

/** The tags the build writes for the style and the script (scripts/buildPage.ts). */
const STYLE_LINK = /<link rel="stylesheet" href="assets\/([^"/]+\.css)">/
const SCRIPT_TAG = /<script type="module" src="assets\/([^"/]+\.js)"><\/script>/

interface InlinePage {
  /** The page up to the first answer, and from it on. */
  readonly before: Buffer
  readonly after: Buffer
  /** The CSP hash sources of the inline script and style. */
  readonly hashes: { readonly script: string; readonly style: string }
}

/** index.html of `dir` with its assets inline, cut where the first answer goes; or what is wrong. */
const inlinePage = async (dir: string): Promise<InlinePage | string> => {
  const index = await Fs.promises.readFile(Path.join(dir, "index.html"), "utf8")
  const parts = index.split(DATA_SLOT)
  const styleName = STYLE_LINK.exec(index)?.[1]
  const scriptName = SCRIPT_TAG.exec(index)?.[1]
  if (parts.length !== 2 || styleName === undefined || scriptName === undefined) {
    return "index.html lacks its data block, its style's link or its script's tag"
  }
  const read = (name: string) => Fs.promises.readFile(Path.join(dir, ASSETS_DIR, name), "utf8").catch(() => undefined)
  const [style, script] = await Promise.all([read(styleName), read(scriptName)])
  if (style === undefined || script === undefined) return `assets/${styleName} or assets/${scriptName} is missing`
  // The HTML parser ends a script at `</script` (and reads `<!--` in one specially), a style at `</style`.
  if (/<\/script|<!--/i.test(script)) return `assets/${scriptName} holds "</script" or "<!--"`
  if (/<\/style/i.test(style)) return `assets/${styleName} holds "</style"`
  // Functions as replacements: the script's own `$&` and `$1` stay as they are.
  const inline = (html: string) =>
    html
      .replace(STYLE_LINK, () => `<style>${style}</style>`)
      .replace(SCRIPT_TAG, () => `<script type="module">${script}</script>`)
  const [before = "", after = ""] = parts
  return {
    before: Buffer.from(inline(`${before}${DATA_SLOT.slice(0, DATA_SLOT.indexOf("</script>"))}`)),
    after: Buffer.from(inline(`</script>${after}`)),
    hashes: { script: hashSource(script), style: hashSource(style) }
  }
}

const hashSource = (text: string): string => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

/** A page that answers only why it cannot be served. */
const unservable = (why: string): PageAssets => {
  const answer = Effect.succeed(
    securityHeaders(HttpServerResponse.text(why, { status: 503, headers: { "cache-control": "no-store" } }))
  )
  return { dir: undefined, index: () => answer }
}

const exists = (path: string) =>
  Effect.promise(() =>
    Fs.promises.stat(path).then(
      (s) => s.isFile(),
      () => false
    )
  )

const acceptsGzip = (request: HttpServerRequest.HttpServerRequest): boolean =>
  /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
