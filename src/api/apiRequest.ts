/**
 * What one API call is (`ApiRequest`), what it gets back (`ApiResponse`), and how a request
 * is built: its body encoded, its headers lower-cased, its X-Request-ID checked or made.
 */
import { Effect } from "effect"
import { ApiError, ClientValidation } from "./ApiError.ts"
import type { Idempotency } from "./retryPolicy.ts"

export type RequestBody =
  | { readonly _tag: "Json"; readonly value: unknown }
  | { readonly _tag: "Form"; readonly fields: ReadonlyArray<readonly [string, string]> }
  | { readonly _tag: "Multipart"; readonly form: FormData }

export interface ApiRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  /** `api`: under base_url, with the bearer. `auth`: under auth_url, without it. */
  readonly root: "api" | "auth"
  /** Relative to the root, starting with "/"; dynamic segments already encoded (see `segment`). */
  readonly path: string
  /** Path with placeholders for errors and logs, e.g. `/files/{file}`. Defaults to `path`. */
  readonly template?: string
  readonly query?: ReadonlyArray<readonly [string, string]>
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: RequestBody
  readonly idempotency: Idempotency
  /** A caller-chosen X-Request-ID (1..100 visible ASCII characters). */
  readonly requestId?: string
}

export interface ApiResponse {
  /** e.g. `GET /files/{file}`: names the operation in errors. */
  readonly operation: string
  readonly status: number
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>
  /** The raw body text ("" for 204, 304 and empty bodies). */
  readonly text: string
  /** The response's X-Request-ID, else the one sent. */
  readonly requestId: string
}

/** Encodes one dynamic path segment (identifiers, keys) so it cannot change the path. */
export const segment = (value: string): string => encodeURIComponent(value)

/** The X-Request-ID rule: 1..100 visible ASCII characters (the spec allows 1..100; a header cannot carry more). */
export const REQUEST_ID_PATTERN = /^[\x21-\x7e]{1,100}$/

/** The response header value, lower-cased name. */
export const header = (response: ApiResponse, name: string): string | undefined => response.headers[name.toLowerCase()]

export const generateRequestId = (): string => `dlsync-${crypto.randomUUID()}`

export const checkRequestId = (id: string, operation: string): Effect.Effect<string, ApiError> =>
  REQUEST_ID_PATTERN.test(id)
    ? Effect.succeed(id)
    : Effect.fail(
        new ApiError({
          operation,
          reason: new ClientValidation({
            field: "X-Request-ID",
            message: `must be 1 to 100 visible ASCII characters, got ${id.length} characters`
          })
        })
      )

/** A request body as bytes with its media type. */
export interface EncodedBody {
  readonly bytes: string | Uint8Array
  readonly contentType: string
}

export const encodeBody = (
  body: RequestBody | undefined,
  operation: string
): Effect.Effect<EncodedBody | undefined, ApiError> => {
  if (body === undefined) return Effect.succeed(undefined)
  const invalid = (cause: unknown) =>
    new ApiError({
      operation,
      reason: new ClientValidation({ field: "body", message: `cannot be encoded: ${String(cause)}` })
    })
  switch (body._tag) {
    case "Form": {
      const form = new URLSearchParams()
      for (const [k, v] of body.fields) form.append(k, v)
      return Effect.succeed({ bytes: form.toString(), contentType: "application/x-www-form-urlencoded" })
    }
    case "Multipart":
      // The platform's own multipart encoder (boundary and all), read into memory: uploads are small files.
      return Effect.tryPromise({
        try: async () => {
          const encoded = new Response(body.form)
          return {
            bytes: new Uint8Array(await encoded.arrayBuffer()),
            contentType: encoded.headers.get("content-type") ?? "multipart/form-data"
          }
        },
        catch: invalid
      })
    case "Json":
      return Effect.try({
        try: () => ({ bytes: JSON.stringify(body.value), contentType: "application/json" }),
        catch: invalid
      })
  }
}

export const lowerKeys = (headers: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
