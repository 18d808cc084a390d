/**
 * What the conformance suites compare of an answer: its status, its media type, and for a
 * JSON body its shape (each key's JSON type: number, string, boolean, null, array, object),
 * never the values that differ between two programs (times, paths, versions).
 */

export type JsonType = "number" | "string" | "boolean" | "null" | "array" | "object"

export interface Answer {
  readonly status: number
  /** The media type without parameters ("text/plain", "application/json"), "" when none. */
  readonly type: string
  readonly text: string
}

export const typeOf = (value: unknown): JsonType =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "object"
        ? "object"
        : typeof value === "number"
          ? "number"
          : typeof value === "boolean"
            ? "boolean"
            : "string"

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Each key's type; for a list of objects, every key any element has. */
export const keyTypes = (value: unknown): ReadonlyMap<string, JsonType> => {
  const out = new Map<string, JsonType>()
  const objects = Array.isArray(value) ? value : [value]
  for (const object of objects) {
    if (isRecord(object)) for (const [key, v] of Object.entries(object)) out.set(key, typeOf(v))
  }
  return out
}

export interface ShapeDifference {
  /** Keys the reference has and the answer lacks. */
  readonly missing: ReadonlyArray<string>
  /** Keys the answer has and the reference lacks. */
  readonly extra: ReadonlyArray<string>
  /** Keys both have, with a different JSON type (`key: reference → answer`); null matches any type. */
  readonly types: ReadonlyArray<string>
}

export const compareShapes = (reference: unknown, answer: unknown): ShapeDifference => {
  const want = keyTypes(reference)
  const got = keyTypes(answer)
  return {
    missing: [...want.keys()].filter((k) => !got.has(k)).sort(),
    extra: [...got.keys()].filter((k) => !want.has(k)).sort(),
    types: [...want]
      .filter(([k, t]) => got.has(k) && got.get(k) !== t && t !== "null" && got.get(k) !== "null")
      .map(([k, t]) => `${k}: ${t} → ${got.get(k)}`)
  }
}

/** A signed-in client of a qBittorrent Web API (cookie session), answering with status, media type and text. */
export const qbitClient = async (origin: string, username: string, password: string) => {
  const login = await fetch(`${origin}/api/v2/auth/login`, {
    method: "POST",
    body: new URLSearchParams({ username, password })
  })
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  if ((await login.text()) !== "Ok." || cookie === "") throw new Error(`cannot sign in to ${origin}`)
  return async (
    method: "GET" | "POST",
    path: string,
    body?: Readonly<Record<string, string>> | FormData
  ): Promise<Answer> => {
    const response = await fetch(`${origin}/api/v2/${path}`, {
      method,
      headers: { cookie },
      ...(body === undefined ? {} : { body: body instanceof FormData ? body : new URLSearchParams(body) })
    })
    return {
      status: response.status,
      type: (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "",
      text: await response.text()
    }
  }
}

export type QbitCall = Awaited<ReturnType<typeof qbitClient>>
