/**
 * The web page's files, as `npm run build` leaves them in `dist/web/` (scripts/build.ts):
 * `index.html` and `assets/<name>-<content hash>.<ext>`, each with a `.gz` beside it. Nothing
 * for a user to build; the daemon serves them as they are:
 *
 *   GET /                 index.html, `Cache-Control: no-cache` with an ETag (it names the
 *                         assets of its build, so it is asked for again, cheaply)
 *   GET /assets/<name>    an asset of the listing taken at start (no other name is ever a
 *                         path), `immutable` for a year: its name changes with its content
 *
 * Both gzip-encoded for a client that accepts it. The index is read at start with the
 * listing (a later build names assets the listing lacks; the build keeps the ones it
 * replaces, scripts/buildPage.ts); assets are read when asked for. Where no built page is
 * found (sources never built), the page is a one-line answer saying to run `npm run build`.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"

export const PAGE_DIR = "web"
export const ASSETS_DIR = "assets"

export interface PageAssets {
  /** The folder served; undefined when no built page was found. */
  readonly dir: string | undefined
  readonly index: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  readonly asset: (
    request: HttpServerRequest.HttpServerRequest,
    name: string
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
    const missing = Effect.succeed(
      HttpServerResponse.text("the web page is not built: run `npm run build` where dlsync is installed\n", {
        status: 503,
        headers: { "cache-control": "no-store" }
      })
    )
    return { dir, index: () => missing, asset: () => missing } satisfies PageAssets
  }
  const root = dir
  const assets = new Set(
    (yield* Effect.promise(() => Fs.promises.readdir(Path.join(root, ASSETS_DIR)).catch(() => []))).filter(
      (name) => !name.endsWith(".gz")
    )
  )
  // The index as listed with its assets: a build after this start (kept in memory, half a
  // KiB) names assets this listing does not hold.
  const indexText = yield* Effect.promise(() => Fs.promises.readFile(Path.join(root, "index.html")))
  const indexGzip = yield* Effect.promise(() =>
    Fs.promises.readFile(Path.join(root, "index.html.gz")).catch(() => undefined)
  )
  const indexTag = `"${createHash("sha256").update(indexText).digest("base64url").slice(0, 22)}"`
  const indexHeaders = { etag: indexTag, "cache-control": "no-cache", vary: "accept-encoding" }

  const index = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.succeed(
      request.headers["if-none-match"] === indexTag
        ? HttpServerResponse.empty({ status: 304, headers: indexHeaders })
        : indexGzip !== undefined && acceptsGzip(request)
          ? HttpServerResponse.uint8Array(indexGzip, {
              contentType: HTML,
              headers: { ...indexHeaders, "content-encoding": "gzip" }
            })
          : HttpServerResponse.uint8Array(indexText, { contentType: HTML, headers: indexHeaders })
    )

  const asset = (request: HttpServerRequest.HttpServerRequest, name: string) =>
    !assets.has(name)
      ? Effect.succeed(
          HttpServerResponse.text("not found\n", { status: 404, headers: { "cache-control": "no-store" } })
        )
      : serveFile(request, Path.join(root, ASSETS_DIR, name), {
          "cache-control": "public, max-age=31536000, immutable"
        })

  return { dir, index, asset } satisfies PageAssets
})

// ---------------------------------------------------------------------------------------

const HTML = "text/html; charset=utf-8"

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": HTML,
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webmanifest": "application/manifest+json"
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

/** The file, gzip-encoded when the client accepts it and the build left a `.gz` beside it. */
const serveFile = (
  request: HttpServerRequest.HttpServerRequest,
  path: string,
  headers: Readonly<Record<string, string>>
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.promise(async () => {
    const contentType = CONTENT_TYPES[Path.extname(path)] ?? "application/octet-stream"
    const body = acceptsGzip(request) ? await Fs.promises.readFile(`${path}.gz`).catch(() => undefined) : undefined
    if (body !== undefined) {
      return HttpServerResponse.uint8Array(body, {
        contentType,
        headers: { ...headers, "content-encoding": "gzip", vary: "accept-encoding" }
      })
    }
    return HttpServerResponse.uint8Array(await Fs.promises.readFile(path), {
      contentType,
      headers: { ...headers, vary: "accept-encoding" }
    })
  })
