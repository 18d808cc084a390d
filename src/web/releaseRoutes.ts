/**
 * The API routes of the releases (the intake, src/intake/Intake.ts), each a write; the list
 * is the status document's `intake`:
 *
 *   POST   /api/releases                  JSON { source: magnet or http(s) URL, category? }, or
 *                                         multipart/form-data: `file` (.torrent or .nzb),
 *                                         `category`                     201 the release | 400
 *   DELETE /api/releases/{id}?files=true  remove it; with files=true its files too, on the
 *                                         service and then in the mirror (as the qBittorrent
 *                                         and SABnzbd APIs remove)           200 {}
 *   POST   /api/releases/{id}/choice      { itemId }: answers the selection that waits for a
 *                                         choice                             200 {} | 400
 *
 * The web page's releases are added `via: "web"`; the page acts on every release (its owner's).
 * An upload is read part by part within MAX_UPLOAD_BYTES (server/requestBody.ts).
 */
import { Duration, Effect, Option, Schema } from "effect"
import type { HttpRouter, HttpServerRequest } from "effect/http"
import type { IntakeId } from "../domain/IntakeId.ts"
import { IntakeId as IntakeIdSchema } from "../domain/IntakeId.ts"
import type { Intake, IntakeError, IntakeSource } from "../intake/Intake.ts"
import { intakeStatus } from "../intake/intakeStatus.ts"
import { readMultipart } from "../server/requestBody.ts"
import { answered, json, jsonBody, pathParam, Refused, refuse } from "./apiAnswers.ts"
import { problem, type WebAccessShape } from "./WebAccess.ts"

/** One .torrent or .nzb file (a very large release's is a few MiB). */
export const MAX_FILE_BYTES = 8 * 1024 * 1024

/** The whole upload: the file and its category. */
export const MAX_UPLOAD_BYTES = MAX_FILE_BYTES + 64 * 1024

export const AddRequest = Schema.Struct({
  source: Schema.String,
  category: Schema.optionalKey(Schema.String)
})

export const ChoiceRequest = Schema.Struct({ itemId: Schema.String })

export const addReleaseRoutes = Effect.fnUntraced(function* (
  router: HttpRouter.HttpRouter,
  deps: { readonly access: WebAccessShape; readonly intake: Intake["Service"] }
) {
  const { access, intake } = deps

  yield* router.add(
    "POST",
    "/api/releases",
    access.write((request) =>
      answered(
        Effect.gen(function* () {
          const { source, category } = yield* addedRelease(request)
          const item = yield* intake.add(source, { category, via: "web" }).pipe(Effect.catchTag("IntakeError", refusal))
          return json(intakeStatus([item]).items[0], 201)
        })
      )
    )
  )
  yield* router.add(
    "DELETE",
    "/api/releases/:id",
    access.write((request) =>
      answered(
        Effect.gen(function* () {
          const id = yield* releaseId(intake)
          const files = new URL(request.url, "http://localhost").searchParams.get("files") === "true"
          yield* intake.remove([id], files).pipe(Effect.catchTag("IntakeError", refusal))
          return json({})
        })
      )
    )
  )
  yield* router.add(
    "POST",
    "/api/releases/:id/choice",
    access.write((request) =>
      answered(
        Effect.gen(function* () {
          const id = yield* releaseId(intake)
          const { itemId } = yield* jsonBody(request, ChoiceRequest)
          yield* intake.choose(id, itemId).pipe(Effect.catchTag("IntakeError", refusal))
          return json({})
        })
      )
    )
  )
})

// ---------------------------------------------------------------------------------------

const UPLOAD_TIMEOUT = Duration.seconds(120)

/** The release a request adds: a magnet or URL in JSON, or an uploaded file. */
const addedRelease = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
  const type = request.headers["content-type"]?.toLowerCase() ?? ""
  if (type.startsWith("multipart/form-data")) {
    const form = yield* readMultipart(request, {
      maxBytes: MAX_UPLOAD_BYTES,
      maxFileBytes: MAX_FILE_BYTES,
      maxFieldBytes: 1024,
      maxParts: 4,
      timeout: UPLOAD_TIMEOUT
    }).pipe(
      Effect.catchTag("BodyRefused", (refused) =>
        refuse(
          refused.status,
          refused.reason === "TooLarge" ? `the upload is over ${refused.maxBytes} bytes` : "unreadable upload"
        )
      )
    )
    const file = form.files[0]
    if (file === undefined) return yield* refuse(400, "no file in the upload (field `file`)")
    const name = file.name.toLowerCase()
    const source: IntakeSource = name.endsWith(".nzb")
      ? { _tag: "NzbFile", fileName: file.name, content: file.content }
      : name.endsWith(".torrent")
        ? { _tag: "TorrentFile", fileName: file.name, content: file.content }
        : yield* refuse(400, "the file must be a .torrent or an .nzb")
    return { source, category: form.fields.get("category")?.trim() ?? "" }
  }
  const body = yield* jsonBody(request, AddRequest)
  const text = body.source.trim()
  const source: IntakeSource = /^magnet:\?/i.test(text)
    ? { _tag: "Magnet", uri: text }
    : /^https?:\/\/[^/]/i.test(text) && URL.canParse(text)
      ? { _tag: "Url", url: text }
      : yield* refuse(400, "the source must be a magnet link or an http(s) URL")
  return { source, category: body.category?.trim() ?? "" }
})

/** The release named by the path, one the intake holds. */
const releaseId = Effect.fnUntraced(function* (intake: Intake["Service"]) {
  const id: IntakeId = IntakeIdSchema.make(yield* pathParam("id"))
  const found = yield* intake.list({ ids: [id] })
  if (Option.isNone(Option.fromNullishOr(found[0]))) return yield* refuse(404, "no such release")
  return id
})

const refusal = (error: IntakeError) =>
  Effect.fail(new Refused({ response: problem(error.reason === "invalid" ? 400 : 503, error.problem) }))
