/** Shared fixtures for emulator tests: a running emulator and small fetch helpers. */
import { afterEach } from "vitest"
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"
import { decode, FilePage, type FileRecord } from "./schemas.ts"

const running: Array<RunningEmulator> = []

/** Starts an emulator that is closed after the current test. */
export const emulator = async (options: EmulatorOptions = {}): Promise<RunningEmulator> => {
  const started = await startEmulator({ library: "empty", ...options })
  running.push(started)
  return started
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()))
})

export interface Call {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body (undefined when empty or not JSON); decode it with test/emulator/schemas.ts. */
  readonly json: unknown
}

/** Calls the emulator with a bearer (default: the OAuth access token). */
export const call = async (
  e: RunningEmulator,
  method: string,
  path: string,
  options: { readonly token?: string | null; readonly body?: unknown; readonly headers?: Record<string, string> } = {}
): Promise<Call> => {
  const token = options.token === undefined ? e.accessToken : options.token
  const headers: Record<string, string> = { Accept: "application/json", ...options.headers }
  if (token !== null) headers.Authorization = `Bearer ${token}`
  if (options.body !== undefined) headers["Content-Type"] ??= "application/json"
  const url = path.startsWith("http")
    ? path
    : `${path.startsWith("/_control") || path.startsWith("/oauth") ? e.authUrl : e.baseUrl}${path}`
  const response = await fetch(url, {
    method,
    headers,
    ...(options.body === undefined
      ? {}
      : { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) })
  })
  const text = await response.text()
  let json: unknown
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** Every page of a GET /files listing, following cursors. */
export const listAll = async (e: RunningEmulator, query: string, token?: string): Promise<Array<FileRecord>> => {
  const items: Array<FileRecord> = []
  let cursor: string | null = null
  for (let page = 0; page < 10_000; page++) {
    const sep = query.length > 0 ? "&" : ""
    const result = await call(
      e,
      "GET",
      `/files?${query}${cursor === null ? "" : `${sep}cursor=${encodeURIComponent(cursor)}`}`,
      {
        ...(token === undefined ? {} : { token })
      }
    )
    if (result.status !== 200) throw new Error(`listing failed: ${result.status} ${result.text}`)
    const page = decode(FilePage, result.json)
    items.push(...page.data)
    if (!page.meta.has_more) return items
    cursor = page.meta.next_cursor
  }
  throw new Error("listing did not end")
}
