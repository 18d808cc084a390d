/**
 * A request body read within bounds, as every local server of dlsync reads one: never more
 * than the caller allows at that point (a few KiB before the credentials are checked), never
 * longer than its timeout, and never whole into memory before a limit is checked.
 *
 * - readBody: the raw bytes, up to `maxBytes` (a declared Content-Length over it is refused
 *   on the head alone; a body without one is refused as soon as it passes the bound).
 * - readUrlEncoded: readBody, then each field's first value (the parse is linear in a body
 *   already bounded small).
 * - readMultipart: multipart/form-data streamed part by part through Effect's parser with
 *   its limits (parts, field size, file size, total), files collected as they arrive; how
 *   much of the body may be taken can depend on the fields read so far (`allowance`), so a
 *   credential in a field opens the way for the file after it.
 *
 * A refusal is a BodyRefused: TooLarge (413), TooSlow (408) or Unreadable (400, malformed or
 * broken). Once refused, nothing more of the body is read; answer with CLOSE_CONNECTION so
 * the connection ends there.
 */
import { Array as Arr, type Duration, Effect, Schema, Stream } from "effect"
import { type HttpServerRequest, Multipart } from "effect/http"

export class BodyRefused extends Schema.TaggedError<BodyRefused>()("BodyRefused", {
  reason: Schema.Literals(["TooLarge", "TooSlow", "Unreadable"]),
  /** The bound passed, for TooLarge. */
  maxBytes: Schema.Number,
  /** What could not be read, for Unreadable. */
  detail: Schema.String
}) {
  /** The HTTP status that answers it. */
  get status(): 400 | 408 | 413 {
    return this.reason === "TooLarge" ? 413 : this.reason === "TooSlow" ? 408 : 400
  }
}

/** Headers of an answer after which the rest of the body is not read. */
export const CLOSE_CONNECTION: Readonly<Record<string, string>> = { connection: "close" }

export interface BodyBounds {
  readonly maxBytes: number
  /** The whole body arrives within this long, or it is TooSlow. */
  readonly timeout: Duration.Input
}

export interface UploadedFile {
  /** The form field it came in. */
  readonly key: string
  /** Its file name as the client gave it. */
  readonly name: string
  readonly content: Uint8Array
}

export interface FormBody {
  /** Each field's first value. */
  readonly fields: ReadonlyMap<string, string>
  readonly files: ReadonlyArray<UploadedFile>
}

export interface MultipartBounds extends BodyBounds {
  readonly maxFileBytes: number
  readonly maxFieldBytes: number
  readonly maxParts: number
  /**
   * How much of the body may be taken, given the fields read so far; at most `maxBytes`.
   * While it is less, the body is taken a KiB at a time, so it is passed by less than a KiB.
   */
  readonly allowance?: (fields: ReadonlyMap<string, string>) => number
}

/** Whether the request's declared Content-Length is over `maxBytes`. */
export const declaredOver = (request: HttpServerRequest.HttpServerRequest, maxBytes: number): boolean => {
  const declared = request.headers["content-length"]
  return declared !== undefined && Number(declared) > maxBytes
}

/** The whole body, within `bounds`. */
export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  bounds: BodyBounds
): Effect.Effect<Uint8Array, BodyRefused> => {
  if (declaredOver(request, bounds.maxBytes)) return Effect.fail(tooLarge(bounds.maxBytes))
  return Stream.runFoldEffect(
    request.stream,
    (): { chunks: Array<Uint8Array>; size: number } => ({ chunks: [], size: 0 }),
    (acc, chunk) => {
      acc.size += chunk.length
      if (acc.size > bounds.maxBytes) return Effect.fail(tooLarge(bounds.maxBytes))
      acc.chunks.push(chunk)
      return Effect.succeed(acc)
    }
  ).pipe(
    Effect.catchTag("HttpServerError", (error) => Effect.fail(unreadable(error.message))),
    Effect.map((acc) => Buffer.concat(acc.chunks, acc.size)),
    within(bounds)
  )
}

/** The fields of a url-encoded body (each one's first value), within `bounds`. */
export const readUrlEncoded = (
  request: HttpServerRequest.HttpServerRequest,
  bounds: BodyBounds
): Effect.Effect<ReadonlyMap<string, string>, BodyRefused> =>
  Effect.map(readBody(request, bounds), (body) => {
    const fields = new Map<string, string>()
    for (const [name, value] of new URLSearchParams(Buffer.from(body).toString("utf8"))) {
      if (!fields.has(name)) fields.set(name, value)
    }
    return fields
  })

/** The fields (each one's first value) and files of a multipart/form-data body, within `bounds`. */
export const readMultipart = (
  request: HttpServerRequest.HttpServerRequest,
  bounds: MultipartBounds
): Effect.Effect<FormBody, BodyRefused> =>
  Effect.suspend(() => {
    if (declaredOver(request, bounds.maxBytes)) return Effect.fail(tooLarge(bounds.maxBytes))
    const fields = new Map<string, string>()
    const files: Array<UploadedFile> = []
    const allowed = () => Math.min(bounds.maxBytes, bounds.allowance?.(fields) ?? bounds.maxBytes)
    let taken = 0
    let refusedAt: number | undefined
    const body = request.stream.pipe(
      Stream.mapError((error) => Multipart.MultipartError.fromReason("InternalError", error)),
      // While less than the whole body is allowed, the parser is fed small slices, each taken
      // only once the fields before it are read: a field can raise the allowance in time.
      Stream.mapArray((chunks) => (allowed() < bounds.maxBytes ? Arr.flatMap(chunks, slices) : chunks)),
      Stream.mapEffect((chunk) => {
        const allowance = allowed()
        if (taken >= allowance) {
          refusedAt = allowance
          return Effect.fail(Multipart.MultipartError.fromReason("BodyTooLarge"))
        }
        taken += chunk.length
        return Effect.succeed(chunk)
      })
    )
    return Stream.runForEach(Stream.pipeThroughChannel(body, Multipart.makeChannel(request.headers)), (part) =>
      part._tag === "Field"
        ? Effect.sync(() => {
            if (!fields.has(part.key)) fields.set(part.key, part.value)
          })
        : Effect.map(part.contentEffect, (content) => {
            files.push({ key: part.key, name: part.name, content })
          })
    ).pipe(
      Effect.as<FormBody>({ fields, files }),
      Effect.provideContext(
        Multipart.limitsServices({
          maxParts: bounds.maxParts,
          maxFieldSize: bounds.maxFieldBytes,
          maxFileSize: bounds.maxFileBytes,
          maxTotalSize: bounds.maxBytes
        })
      ),
      Effect.mapError((error) => {
        switch (error.reason._tag) {
          case "Parse":
          case "InternalError":
            return unreadable("malformed multipart/form-data body")
          case "FileTooLarge":
            return tooLarge(bounds.maxFileBytes)
          case "FieldTooLarge":
            return tooLarge(bounds.maxFieldBytes)
          default:
            return tooLarge(refusedAt ?? bounds.maxBytes)
        }
      }),
      within(bounds)
    )
  })

// ---------------------------------------------------------------------------------------

/** What the parser is fed at a time while the allowance is short of the whole body. */
const SLICE_BYTES = 1024

const slices = (chunk: Uint8Array): Arr.NonEmptyReadonlyArray<Uint8Array> => {
  if (chunk.length <= SLICE_BYTES) return [chunk]
  const out: Arr.NonEmptyArray<Uint8Array> = [chunk.subarray(0, SLICE_BYTES)]
  for (let at = SLICE_BYTES; at < chunk.length; at += SLICE_BYTES) out.push(chunk.subarray(at, at + SLICE_BYTES))
  return out
}

const tooLarge = (maxBytes: number) => new BodyRefused({ reason: "TooLarge", maxBytes, detail: "" })

const unreadable = (detail: string) => new BodyRefused({ reason: "Unreadable", maxBytes: 0, detail })

const within =
  (bounds: BodyBounds) =>
  <A>(read: Effect.Effect<A, BodyRefused>): Effect.Effect<A, BodyRefused> =>
    Effect.timeoutOrElse(read, {
      duration: bounds.timeout,
      orElse: () => Effect.fail(new BodyRefused({ reason: "TooSlow", maxBytes: 0, detail: "" }))
    })
