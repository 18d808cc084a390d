/**
 * The parameters of a qBittorrent API call, as qBittorrent reads them: the query string
 * merged with a url-encoded or multipart/form-data body (the apps switch to multipart for
 * a file or for any value over 1024 bytes, such as a long magnet). File parts are the
 * uploaded .torrent files, whatever their field name (`torrents` for the apps, `file` for
 * other clients).
 *
 * Bounded: a body over MAX_BODY_BYTES is refused with 413 before it is read whole (from its
 * Content-Length when it has one, else as it arrives). A malformed body or an unknown body
 * type is a 400 naming the problem.
 */
import { Effect, Schema, Stream } from "effect"
import type { HttpServerRequest } from "effect/http"

/** The largest request body read (a .torrent of a very large release is a few MiB). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024

export interface UploadedFile {
  readonly fileName: string
  readonly content: Uint8Array
}

export interface RequestForm {
  /** The first value of a parameter; body values win over the query's. */
  readonly get: (name: string) => string | undefined
  readonly files: ReadonlyArray<UploadedFile>
}

export class FormProblem extends Schema.TaggedError<FormProblem>()("FormProblem", {
  status: Schema.Literals([400, 413, 415]),
  problem: Schema.String
}) {}

export const readForm = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number = MAX_BODY_BYTES
): Effect.fn.Return<RequestForm, FormProblem> {
  const query = new URL(request.url, "http://localhost").searchParams
  const values = new Map<string, string>()
  const files: Array<UploadedFile> = []
  const declared = request.headers["content-length"]
  if (declared !== undefined && Number(declared) > maxBytes) return yield* tooLarge(maxBytes)
  const body =
    request.method === "GET" || request.method === "HEAD" ? new Uint8Array() : yield* readBody(request, maxBytes)

  if (body.length > 0) {
    const contentType = request.headers["content-type"] ?? ""
    const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? ""
    if (mediaType === "multipart/form-data") {
      const form = yield* Effect.tryPromise({
        // The web platform's multipart parser (undici), fed the bytes already bounded above.
        try: () => new Response(body, { headers: { "content-type": contentType } }).formData(),
        catch: (e) =>
          new FormProblem({
            status: 400,
            problem: `malformed multipart/form-data body (${e instanceof Error ? e.message : String(e)})`
          })
      })
      for (const [name, value] of form.entries()) {
        if (typeof value === "string") {
          if (!values.has(name)) values.set(name, value)
        } else {
          const content = new Uint8Array(yield* Effect.promise(() => value.arrayBuffer()))
          files.push({ fileName: value.name || `${name}.torrent`, content })
        }
      }
    } else if (mediaType === "application/x-www-form-urlencoded" || mediaType === "" || mediaType === "text/plain") {
      for (const [name, value] of new URLSearchParams(new TextDecoder().decode(body))) {
        if (!values.has(name)) values.set(name, value)
      }
    } else {
      return yield* new FormProblem({
        status: 415,
        problem: `unsupported body type ${JSON.stringify(mediaType)}: send application/x-www-form-urlencoded or multipart/form-data`
      })
    }
  }
  return {
    get: (name) => values.get(name) ?? query.get(name) ?? undefined,
    files
  }
})

// ---------------------------------------------------------------------------------------

const tooLarge = (maxBytes: number) =>
  new FormProblem({
    status: 413,
    problem: `request body larger than ${Math.round(maxBytes / 1024 / 1024)} MiB`
  })

const readBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  request.stream.pipe(
    Stream.mapError((e) => new FormProblem({ status: 400, problem: `cannot read the request body (${e.message})` })),
    Stream.runFoldEffect(
      () => ({ chunks: [] as Uint8Array[], size: 0 }),
      (acc, chunk: Uint8Array) => {
        acc.size += chunk.length
        if (acc.size > maxBytes) return Effect.fail(tooLarge(maxBytes))
        acc.chunks.push(chunk)
        return Effect.succeed(acc)
      }
    ),
    Effect.map(({ chunks }) => Buffer.concat(chunks))
  )
