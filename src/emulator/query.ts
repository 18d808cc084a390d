/**
 * Query-string validation for API routes: collects every problem per field, so one 422
 * `validation_failed` names them all in `details.fields`.
 */
import { parseRfc3339Micros } from "./clock.ts"
import { type RouteResult, validationFailed } from "./http.ts"

export class QueryReader {
  readonly #params: URLSearchParams
  readonly #fields: Record<string, Array<string>> = {}

  constructor(params: URLSearchParams) {
    this.#params = params
  }

  /** `true` / `false` (absent = `fallback`); anything else is a field error. */
  bool(name: string, fallback = false): boolean {
    const value = this.#params.get(name)
    if (value === null) return fallback
    if (value === "true") return true
    if (value === "false") return false
    this.fail(name, "must be true or false")
    return fallback
  }

  /** An integer within bounds (absent = `fallback`). */
  int(name: string, bounds: { readonly fallback: number; readonly min: number; readonly max: number }): number {
    const value = this.#params.get(name)
    if (value === null) return bounds.fallback
    if (!/^-?\d+$/.test(value)) {
      this.fail(name, "must be an integer")
      return bounds.fallback
    }
    const n = Number(value)
    if (n < bounds.min || n > bounds.max) {
      this.fail(name, `must be between ${bounds.min} and ${bounds.max}`)
      return bounds.fallback
    }
    return n
  }

  /** The value, or undefined when absent or empty. */
  string(name: string): string | undefined {
    const value = this.#params.get(name)
    return value === null || value === "" ? undefined : value
  }

  /** Microseconds of a full RFC 3339 timestamp with time zone. */
  timestamp(name: string): number | undefined {
    const value = this.string(name)
    if (value === undefined) return undefined
    const micros = parseRfc3339Micros(value)
    if (micros === undefined) this.fail(name, "must be a full RFC 3339 timestamp with a time zone")
    return micros
  }

  fail(name: string, message: string): void {
    const list = this.#fields[name] ?? []
    list.push(message)
    this.#fields[name] = list
  }

  /** The 422 answer when any field failed. */
  get error(): RouteResult | undefined {
    return Object.keys(this.#fields).length === 0 ? undefined : validationFailed(this.#fields)
  }
}
