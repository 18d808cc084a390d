/**
 * The parameters of a qBittorrent API call, as qBittorrent reads them: the query string
 * merged with a url-encoded or multipart/form-data body (the apps switch to multipart for
 * a file or for any value over 1024 bytes, such as a long magnet). File parts are the
 * uploaded .torrent files, whatever their field name (`torrents` for the apps, `file` for
 * other clients).
 *
 * Bounded (server/requestBody.ts), by who is asking:
 * - LOGIN_LIMITS for auth/login, read before any credential is known: the whole body within
 *   LOGIN_MAX_BYTES (a user name and a password), within LOGIN_TIMEOUT;
 * - CALL_LIMITS once signed in: a url-encoded form within MAX_FORM_BYTES (it is parsed at
 *   once), a multipart form streamed part by part, each .torrent within MAX_TORRENT_BYTES
 *   and all of it within MAX_UPLOAD_BYTES.
 * A body over its bound is 413 and read no further, one too slow 408, a malformed body or an
 * unknown body type 400 or 415 naming the problem.
 */
import { Duration, Effect, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import { type BodyRefused, readMultipart, readUrlEncoded } from "../server/requestBody.ts"

/** A sign-in's body: a user name and a password. */
export const LOGIN_MAX_BYTES = 4 * 1024

/** A url-encoded form once signed in (hashes, a magnet, settings). */
export const MAX_FORM_BYTES = 64 * 1024

/** One .torrent file (a very large release's is a few MiB). */
export const MAX_TORRENT_BYTES = 8 * 1024 * 1024

/** A whole multipart form: a few .torrent files and their fields. */
export const MAX_UPLOAD_BYTES = 16 * 1024 * 1024

/** A sign-in's body arrives within this long. */
export const LOGIN_TIMEOUT = Duration.seconds(10)

/** Any other body arrives within this long. */
export const BODY_TIMEOUT = Duration.seconds(60)

export interface FormLimits {
  /** A url-encoded body; for a multipart one, each field. */
  readonly formBytes: number
  readonly torrentBytes: number
  readonly uploadBytes: number
  readonly timeout: Duration.Input
}

export const LOGIN_LIMITS: FormLimits = {
  formBytes: LOGIN_MAX_BYTES,
  torrentBytes: LOGIN_MAX_BYTES,
  uploadBytes: LOGIN_MAX_BYTES,
  timeout: LOGIN_TIMEOUT
}

export const CALL_LIMITS: FormLimits = {
  formBytes: MAX_FORM_BYTES,
  torrentBytes: MAX_TORRENT_BYTES,
  uploadBytes: MAX_UPLOAD_BYTES,
  timeout: BODY_TIMEOUT
}

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
  status: Schema.Literals([400, 408, 413, 415]),
  problem: Schema.String
}) {}

export const readForm = Effect.fnUntraced(function* (
  request: HttpServerRequest.HttpServerRequest,
  limits: FormLimits
): Effect.fn.Return<RequestForm, FormProblem> {
  const query = new URL(request.url, "http://localhost").searchParams
  const fromQuery = (name: string) => query.get(name) ?? undefined
  if (request.method === "GET" || request.method === "HEAD") return { get: fromQuery, files: [] }
  const contentType = request.headers["content-type"] ?? ""
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? ""
  if (mediaType === "multipart/form-data") {
    const body = yield* readMultipart(request, {
      maxBytes: limits.uploadBytes,
      maxFileBytes: limits.torrentBytes,
      maxFieldBytes: limits.formBytes,
      maxParts: MAX_PARTS,
      timeout: limits.timeout
    }).pipe(Effect.mapError(problemOf))
    return {
      get: (name) => body.fields.get(name) ?? fromQuery(name),
      files: body.files.map((file) => ({ fileName: file.name || `${file.key}.torrent`, content: file.content }))
    }
  }
  if (mediaType === "application/x-www-form-urlencoded" || mediaType === "" || mediaType === "text/plain") {
    const fields = yield* readUrlEncoded(request, { maxBytes: limits.formBytes, timeout: limits.timeout }).pipe(
      Effect.mapError(problemOf)
    )
    return { get: (name) => fields.get(name) ?? fromQuery(name), files: [] }
  }
  return yield* new FormProblem({
    status: 415,
    problem: `unsupported body type ${JSON.stringify(mediaType)}: send application/x-www-form-urlencoded or multipart/form-data`
  })
})

// ---------------------------------------------------------------------------------------

/** Parts of one multipart form: the apps send a few fields and a file. */
const MAX_PARTS = 64

const problemOf = (refused: BodyRefused): FormProblem => {
  switch (refused.reason) {
    case "TooLarge":
      return new FormProblem({ status: 413, problem: `request body larger than ${sizeText(refused.maxBytes)}` })
    case "TooSlow":
      return new FormProblem({ status: 408, problem: "request body not received in time" })
    case "Unreadable":
      return new FormProblem({ status: 400, problem: refused.detail })
  }
}

/** "4 KiB", "8 MiB". */
const sizeText = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`
