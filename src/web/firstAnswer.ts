/**
 * What the page's HTML carries for its first render, so the overview shows with no request
 * after the page's own: whether this visitor may read (`GET /api/session`'s answer, without
 * the token: the page asks for that when it first writes) and, when it may, the status
 * document (`GET /api/status`'s answer, from the same source). A visitor who must sign in
 * first gets no document.
 *
 * It sits in the page as JSON in a data block (`<script type="application/json">`, never
 * run, so the Content-Security-Policy needs no allowance for it), every `<`, `>` and `&`
 * written as a JSON escape: no text in it (a file's name) can close the block or open markup.
 */
import type { StatusDocument } from "../engine/statusDocument.ts"

/** The data block's element id. */
export const FIRST_ANSWER_ID = "dlsync-first"

/** `Status` is the document's type; the server holds it as the unknown JSON value its source gives. */
export interface FirstAnswer<Status = StatusDocument> {
  /** Whether this server asks for a password (it listens beyond loopback). */
  readonly loginRequired: boolean
  /** Whether this request may read (no password asked, a session, or Basic). */
  readonly signedIn: boolean
  /** The status document; null when signed out, or when it could not be read (the page asks again). */
  readonly status: Status | null
}

/** `value` as JSON that is safe between `<script type="application/json">` and `</script>`. */
export const inlineJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
