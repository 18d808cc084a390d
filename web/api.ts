/**
 * The daemon's JSON API as the page uses it (README.md, "The web page": the table), and the
 * first answer the page itself carries (src/web/firstAnswer.ts). Paths are relative, so the
 * page works behind a reverse proxy under a sub-path too. The shapes are the server's own
 * types: every number the page shows is the status document's (`dlsync status --json`).
 */
import type { StatusDocument } from "../src/engine/statusDocument.ts"
import { FIRST_ANSWER_ID, type FirstAnswer } from "../src/web/firstAnswer.ts"
import type { SessionView } from "../src/web/WebAccess.ts"

export type { ControlState } from "../src/engine/DaemonControl.ts"
export type { StatusDocument } from "../src/engine/statusDocument.ts"
export type { ActiveTransfer, TransfersStatus } from "../src/engine/transfersStatus.ts"
export type { IntakeStatus, IntakeStatusItem } from "../src/intake/intakeStatus.ts"
export type { PageEvent } from "../src/web/EventStream.ts"
export type { FirstAnswer } from "../src/web/firstAnswer.ts"
export type { RateSample } from "../src/web/rateHistory.ts"
export type { SessionView } from "../src/web/WebAccess.ts"

/** The header a write carries its session's token in (src/web/WebAccess.ts). */
const CSRF_HEADER = "x-csrf-token"

/** An answer other than 2xx: its status and the server's one-line reason. */
export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** The token of this page's writes: from the session's answer or the login's, asked for by the first write. */
let csrfToken: string | null = null

const failure = async (response: Response): Promise<ApiError> => {
  const text = await response.text()
  let message = text.trim() || response.statusText
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && "error" in parsed && typeof parsed.error === "string") {
      message = parsed.error
    }
  } catch {
    // A plain-text answer (a proxy's, or the server's 404) is its own message.
  }
  return new ApiError(response.status, message)
}

const readJson = async <A>(response: Response): Promise<A> => {
  if (!response.ok) throw await failure(response)
  return (await response.json()) as A
}

export const getSession = async (): Promise<SessionView> => {
  const view = await readJson<SessionView>(await fetch("api/session", { cache: "no-store" }))
  csrfToken = view.csrfToken
  return view
}

export const getStatus = async (): Promise<StatusDocument> =>
  readJson<StatusDocument>(await fetch("api/status", { cache: "no-store" }))

/** The first answer in the page's data block; undefined when it holds none (a page not served by dlsync). */
export const readFirstAnswer = (): FirstAnswer | undefined => {
  const text = document.getElementById(FIRST_ANSWER_ID)?.textContent ?? ""
  // The server writes it, from the types it imports: one build serves both.
  return text.trim() === "" ? undefined : (JSON.parse(text) as FirstAnswer)
}

/** A write: JSON (or a form) with the session's CSRF token. */
export const send = async <A = unknown>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<A> => {
  const token = csrfToken ?? (await getSession()).csrfToken
  const headers: Record<string, string> = token === null ? {} : { [CSRF_HEADER]: token }
  const init: RequestInit =
    body instanceof FormData
      ? { method, headers, body }
      : body === undefined
        ? { method, headers }
        : { method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) }
  return readJson<A>(await fetch(path, init))
}

export const login = async (password: string): Promise<SessionView> => {
  const view = await send<SessionView>("POST", "api/login", { password })
  csrfToken = view.csrfToken
  return view
}
