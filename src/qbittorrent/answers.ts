/**
 * How the qBittorrent API answers, as qBittorrent 5.0 writes its answers: plain text
 * (`text/plain; charset=UTF-8`) for texts and for the empty 200 of an action, JSON for
 * reads, and an error as its status with a short plain-text line. One endpoint is one
 * `scope/action`; its failures are answers already (400, 404, 409, 415, 503).
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { IntakeError } from "../intake/Intake.ts"
import type { RequestForm } from "./requestForm.ts"

export type Response = HttpServerResponse.HttpServerResponse

export interface Endpoint {
  /** Changes something: POST only (qBittorrent 5 answers 405 to a GET). */
  readonly write: boolean
  readonly run: (form: RequestForm) => Effect.Effect<Response>
}

const NO_STORE = { "cache-control": "no-store" }

/** A plain-text answer, as qBittorrent sends its texts. */
export const text = (code: number, body: string): Response =>
  HttpServerResponse.text(body, { status: code, headers: NO_STORE, contentType: "text/plain; charset=UTF-8" })

export const json = (value: unknown): Response => HttpServerResponse.jsonUnsafe(value, { headers: NO_STORE })

/** The empty 200 of an action: qBittorrent still names its type (text/plain). */
export const okEmpty: Response = text(200, "")

export const badRequest = (problem: string): Response => text(400, `${problem}\n`)

export const notFound: Response = text(404, "Not Found")

export const conflict = (problem: string): Response => text(409, problem)

/** The intake refused (`invalid`: the caller's input, 400) or cannot record now (503). */
export const intakeProblem = (error: IntakeError): Response =>
  error.reason === "invalid" ? badRequest(error.problem) : text(503, `${error.problem}\n`)

/** An endpoint whose failures are answers already. */
const endpoint =
  (writes: boolean) =>
  (run: (form: RequestForm) => Effect.Effect<Response, Response>): Endpoint => ({
    write: writes,
    run: (form) => Effect.catch(run(form), Effect.succeed)
  })
export const read = endpoint(false)
export const write = endpoint(true)

/** A parameter qBittorrent requires (`requireParams`): 400 when absent. */
export const required = (form: RequestForm, name: string): Effect.Effect<string, Response> => {
  const value = form.get(name)
  return value === undefined ? Effect.fail(badRequest(`missing parameter "${name}"`)) : Effect.succeed(value)
}

/** True/False in any case (the apps send "True"), 1/0; undefined when absent or neither. */
export const parseBool = (value: string | undefined): boolean | undefined => {
  const v = value?.trim().toLowerCase()
  return v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : undefined
}

/** An integer parameter as Qt's toInt reads it; undefined when absent or not a number. */
export const integer = (value: string | undefined): number | undefined =>
  value !== undefined && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : undefined

/** A comma list of tags, trimmed, without empty ones. */
export const splitTags = (value: string | undefined): ReadonlyArray<string> =>
  (value ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
