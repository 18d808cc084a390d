/**
 * How a route of the web page's API answers: JSON, `{ "error": "<one line>" }` for a
 * refusal (a `Refused` failure, turned into its answer by `answered`), and its JSON body
 * read within MAX_JSON_BYTES and BODY_TIMEOUT, after the access check (server/requestBody.ts),
 * then decoded with a schema.
 */
import { Data, Duration, Effect, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { CLOSE_CONNECTION, readBody } from "../server/requestBody.ts"
import { problem } from "./WebAccess.ts"

/** Every JSON body of the API is a few fields. */
export const MAX_JSON_BYTES = 16 * 1024

export const BODY_TIMEOUT = Duration.seconds(30)

/** A request the API refuses, with its answer. */
export class Refused extends Data.TaggedError("Refused")<{
  readonly response: HttpServerResponse.HttpServerResponse
}> {}

export const refuse = (status: number, error: string): Effect.Effect<never, Refused> =>
  Effect.fail(new Refused({ response: problem(status, error) }))

/** A route's answer, its refusals included. */
export const answered = <R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, Refused, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  Effect.catchTag(effect, "Refused", (refused) => Effect.succeed(refused.response))

export const json = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(body, { status, headers: { "cache-control": "no-store" } })

/** The request's JSON body decoded with `schema` (an empty body reads as `{}`). */
export const jsonBody = <A>(
  request: HttpServerRequest.HttpServerRequest,
  schema: Schema.Decoder<A>
): Effect.Effect<A, Refused> =>
  readBody(request, { maxBytes: MAX_JSON_BYTES, timeout: BODY_TIMEOUT }).pipe(
    Effect.catchTag("BodyRefused", (refused) =>
      Effect.fail(
        new Refused({
          response: HttpServerResponse.setHeaders(
            problem(
              refused.status,
              refused.reason === "TooLarge"
                ? `the body is over ${refused.maxBytes} bytes`
                : refused.reason === "TooSlow"
                  ? "the body did not arrive in time"
                  : `unreadable body: ${refused.detail}`
            ),
            CLOSE_CONNECTION
          )
        })
      )
    ),
    Effect.flatMap((bytes) => {
      const text = Buffer.from(bytes).toString("utf8")
      return Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(text === "" ? "{}" : text).pipe(
        Effect.catchTag("SchemaError", (error) =>
          refuse(400, `bad request body: ${error.message.split("\n").join(" ").slice(0, 300)}`)
        )
      )
    })
  )

/** A path parameter of the matched route; a missing one is a refusal. */
export const pathParam = (name: string) =>
  Effect.flatMap(HttpRouter.params, (params) => {
    const value = params[name]
    return value === undefined || value === "" ? refuse(400, `missing ${name}`) : Effect.succeed(value)
  })
