/**
 * Opaque signed tokens (cursors, ZIP links): base64url(JSON payload) "." HMAC. A token
 * that does not verify, or whose purpose differs, decodes to undefined; callers answer
 * 422 (cursors) or 403 (links).
 */
import type { EmulatorState } from "./state.ts"

export const encodeToken = (
  state: EmulatorState,
  purpose: string,
  payload: Readonly<Record<string, unknown>>
): string => {
  const body = Buffer.from(JSON.stringify(payload), "utf8").toString("base64url")
  return `${body}.${state.sign(`${purpose}\n${body}`)}`
}

export const decodeToken = (
  state: EmulatorState,
  purpose: string,
  token: string
): Readonly<Record<string, unknown>> | undefined => {
  const dot = token.indexOf(".")
  if (dot <= 0) return undefined
  const body = token.slice(0, dot)
  if (!state.verify(`${purpose}\n${body}`, token.slice(dot + 1))) return undefined
  try {
    const value: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    return Object.fromEntries(Object.entries(value))
  } catch {
    return undefined
  }
}
