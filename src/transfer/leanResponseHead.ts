/** The lean reader's response parser: an HTTP/1.1 status line and headers. */
import type { Headers } from "./judgeResponse.ts"

/** Status line and headers; names lower-cased, repeated headers kept as lists. */
export const parseHead = (
  text: string
): { readonly version: string; readonly status: number; readonly headers: Headers } | undefined => {
  const lines = text.split("\r\n")
  const m = /^HTTP\/(1\.[01]) (\d{3})/.exec(lines[0] ?? "")
  if (m === null) return undefined
  const headers: Record<string, string | Array<string>> = {}
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] ?? ""
    const colon = line.indexOf(":")
    if (colon <= 0) return undefined
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    const prev = headers[name]
    headers[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
  }
  return { version: m[1] ?? "1.1", status: Number(m[2]), headers }
}
