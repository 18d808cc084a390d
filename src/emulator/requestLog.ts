/**
 * Every request either origin received (method, path with query, headers, status), newest
 * last, so tests can prove for instance that no Authorization header ever reached the CDN.
 * Bounded: the oldest entries go first beyond `capacity`.
 */
import type { IncomingHttpHeaders } from "node:http"

export type Origin = "api" | "cdn"

export interface LoggedRequest {
  readonly seq: number
  /** Milliseconds on the emulator's clock. */
  readonly at: number
  readonly origin: Origin
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly requestId: string
  status: number | null
}

export class RequestLog {
  readonly #capacity: number
  #entries: Array<LoggedRequest> = []
  #seq = 0

  constructor(capacity = 10_000) {
    this.#capacity = capacity
  }

  record(
    entry: Omit<LoggedRequest, "seq" | "status" | "headers"> & { readonly headers: IncomingHttpHeaders }
  ): LoggedRequest {
    const logged: LoggedRequest = { ...entry, headers: flattenHeaders(entry.headers), seq: ++this.#seq, status: null }
    this.#entries.push(logged)
    if (this.#entries.length > this.#capacity * 1.25) this.#entries = this.#entries.slice(-this.#capacity)
    return logged
  }

  /** Entries, oldest first, optionally only one origin's and only after a seq. */
  list(
    filter: { readonly origin?: Origin | undefined; readonly afterSeq?: number | undefined } = {}
  ): ReadonlyArray<LoggedRequest> {
    return this.#entries
      .slice(-this.#capacity)
      .filter(
        (entry) =>
          (filter.origin === undefined || entry.origin === filter.origin) &&
          (filter.afterSeq === undefined || entry.seq > filter.afterSeq)
      )
  }

  clear(): void {
    this.#entries = []
  }
}

const flattenHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}
