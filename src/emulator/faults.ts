/**
 * Fault injection. A fault targets requests by path pattern (and optionally method) and
 * fires for the next `count` matching requests, or with a `probability` per request, or
 * both (at most `count` times). The server applies it to every route of both origins:
 *
 *   status_429 / status_500 / status_503   answer with that status instead of running the route
 *   reset        run the route, send part of the body, then reset the connection (RST)
 *   truncate     run the route, promise the full Content-Length, send part, close cleanly
 *   slow         run the route, send the body at `bytesPerSecond`
 *   malformed_json   a JSON answer becomes text that does not parse (status unchanged)
 *   duplicate_items  a JSON answer's `data` array repeats its items (change pages, listings)
 *   range_ignored / wrong_range_start / link_expired   CDN only (see cdn.ts)
 *   latency      wait `delayMs` (or a random time in [delayMs, maxDelayMs]) before the route
 *                runs: a real service's round trip. Latency faults add to each other and to
 *                any other fault the request meets.
 *
 * Patterns: a route template exactly as registered ("/api/v1/files/:file"), or a glob on the
 * request path where `*` matches within one segment and `**` across segments.
 */

import type { ServerResponse } from "node:http"
import { TLSSocket } from "node:tls"

export const FAULT_KINDS = [
  "status_429",
  "status_500",
  "status_503",
  "reset",
  "truncate",
  "slow",
  "malformed_json",
  "duplicate_items",
  "range_ignored",
  "wrong_range_start",
  "link_expired",
  "latency"
] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

const FAULT_KIND_SET: ReadonlySet<unknown> = new Set(FAULT_KINDS)

export const isFaultKind = (value: unknown): value is FaultKind => FAULT_KIND_SET.has(value)

export interface FaultSpec {
  readonly kind: FaultKind
  readonly path: string
  readonly method?: string | undefined
  /** Fire for the next N matching requests (default 1 when no probability is given). */
  readonly count?: number | undefined
  /** Fire with this probability per matching request (0 < p ≤ 1). */
  readonly probability?: number | undefined
  /** Retry-After for status_429 (default 1) and status_503 (default none). */
  readonly retryAfterSeconds?: number | undefined
  /** reset / truncate: body bytes sent first (default: half the body). */
  readonly afterBytes?: number | undefined
  /** slow: pace of the body (default 64 KiB/s). */
  readonly bytesPerSecond?: number | undefined
  /** latency: the delay before the route runs (default 50 ms)… */
  readonly delayMs?: number | undefined
  /** …or a random delay between delayMs and this (inclusive), drawn per request. */
  readonly maxDelayMs?: number | undefined
}

export interface Fault extends FaultSpec {
  readonly id: string
  /** Firings left, or null for "until removed" (probability without count). */
  remaining: number | null
  fired: number
}

export class Faults {
  readonly #faults: Array<Fault> = []
  readonly #random: () => number
  #next = 1

  constructor(random: () => number = Math.random) {
    this.#random = random
  }

  /** Registers a fault; throws RangeError for an invalid spec. */
  add(spec: FaultSpec): Fault {
    validate(spec)
    const fault: Fault = {
      ...spec,
      id: `flt_${this.#next++}`,
      remaining: spec.count ?? (spec.probability === undefined ? 1 : null),
      fired: 0
    }
    this.#faults.push(fault)
    return fault
  }

  list(): ReadonlyArray<Fault> {
    return [...this.#faults]
  }

  remove(id: string): boolean {
    const index = this.#faults.findIndex((fault) => fault.id === id)
    if (index < 0) return false
    this.#faults.splice(index, 1)
    return true
  }

  clear(): void {
    this.#faults.length = 0
  }

  /** The fault other than latency that fires for this request, if any (consuming one firing). */
  take(method: string, pathname: string, template: string | undefined): Fault | undefined {
    for (const fault of this.#faults) {
      if (fault.kind === "latency" || !this.#fires(fault, method, pathname, template)) continue
      this.#consume(fault)
      return fault
    }
    return undefined
  }

  /** Milliseconds this request waits before its route runs: every latency fault that fires, added. */
  delayFor(method: string, pathname: string, template: string | undefined): number {
    let delay = 0
    for (const fault of [...this.#faults]) {
      if (fault.kind !== "latency" || !this.#fires(fault, method, pathname, template)) continue
      this.#consume(fault)
      const min = fault.delayMs ?? DEFAULT_LATENCY_MS
      const max = fault.maxDelayMs ?? min
      delay += min + Math.floor(this.#random() * (max - min + 1))
    }
    return delay
  }

  #fires(fault: Fault, method: string, pathname: string, template: string | undefined): boolean {
    if (fault.method !== undefined && fault.method.toUpperCase() !== method) return false
    if (!matchesPattern(fault.path, pathname, template)) return false
    return fault.probability === undefined || this.#random() < fault.probability
  }

  #consume(fault: Fault): void {
    fault.fired++
    if (fault.remaining !== null) {
      fault.remaining--
      if (fault.remaining <= 0) this.#faults.splice(this.#faults.indexOf(fault), 1)
    }
  }
}

const DEFAULT_LATENCY_MS = 50

export const matchesPattern = (pattern: string, pathname: string, template: string | undefined): boolean => {
  if (template !== undefined && pattern === template) return true
  return globToRegExp(pattern).test(pathname)
}

/**
 * Writes a body under a fault's shaping (reset, truncate, slow), or plainly. `write`
 * resolves false when the connection is gone and the caller should stop producing.
 * The caller has already sent headers promising the full length.
 */
export class BodyWriter {
  readonly #response: ServerResponse
  readonly #fault: Fault | undefined
  readonly #cutAt: number
  /** The pace of the body (a slow fault, else the CDN's per-connection cap unless a cut fault applies), or none. */
  readonly #rate: number | undefined
  readonly #total: number
  #sent = 0
  #cut = false

  /** `ratePerConnection` paces a body no slow fault paces (the CDN's cap on each connection). */
  constructor(response: ServerResponse, fault: Fault | undefined, totalLength: number, ratePerConnection?: number) {
    this.#response = response
    this.#fault = fault?.kind === "reset" || fault?.kind === "truncate" || fault?.kind === "slow" ? fault : undefined
    this.#rate =
      this.#fault?.kind === "slow"
        ? (this.#fault.bytesPerSecond ?? 65_536)
        : this.#fault === undefined
          ? ratePerConnection
          : undefined
    this.#total = totalLength
    this.#cutAt =
      this.#fault?.kind === "slow" || this.#fault === undefined
        ? Number.POSITIVE_INFINITY
        : Math.min(this.#fault.afterBytes ?? Math.floor(totalLength / 2), Math.max(0, totalLength - 1))
  }

  get closed(): boolean {
    return this.#cut || this.#response.destroyed
  }

  async write(chunk: Buffer): Promise<boolean> {
    if (this.closed) return false
    if (this.#rate !== undefined) return this.#writeSlowly(chunk, this.#rate)
    if (this.#sent + chunk.length >= this.#cutAt) {
      const head = chunk.subarray(0, this.#cutAt - this.#sent)
      await this.#cutAfter(head)
      return false
    }
    this.#sent += chunk.length
    return this.#plainWrite(chunk)
  }

  /**
   * Writes several buffers as one (a single writev when nothing shapes the body). The
   * buffers are not copied and must stay unchanged.
   */
  async writeMany(chunks: ReadonlyArray<Buffer>): Promise<boolean> {
    if (this.#fault !== undefined || this.#rate !== undefined) return this.write(Buffer.concat(chunks))
    if (this.closed) return false
    const response = this.#response
    response.cork()
    for (const chunk of chunks) {
      this.#sent += chunk.length
      response.write(chunk)
    }
    response.uncork()
    if (!response.writableNeedDrain) return !response.destroyed
    return new Promise<boolean>((resolve) => {
      const done = () => {
        response.off("drain", done)
        response.off("close", done)
        resolve(!response.destroyed)
      }
      response.once("drain", done)
      response.once("close", done)
    })
  }

  async end(): Promise<void> {
    if (this.closed) return
    if (this.#cutAt === 0 && this.#fault !== undefined) {
      await this.#cutAfter(Buffer.alloc(0))
      return
    }
    await new Promise<void>((resolve) => this.#response.end(resolve))
  }

  async #plainWrite(chunk: Buffer): Promise<boolean> {
    if (this.#response.write(chunk)) return true
    return new Promise<boolean>((resolve) => {
      const done = () => {
        this.#response.off("drain", done)
        this.#response.off("close", done)
        resolve(!this.#response.destroyed)
      }
      this.#response.once("drain", done)
      this.#response.once("close", done)
    })
  }

  async #writeSlowly(chunk: Buffer, rate: number): Promise<boolean> {
    const slice = Math.max(1, Math.floor(rate / 20))
    for (let offset = 0; offset < chunk.length; offset += slice) {
      if (this.closed) return false
      const piece = chunk.subarray(offset, offset + slice)
      if (!(await this.#plainWrite(piece))) return false
      this.#sent += piece.length
      // No pause after the body's last byte: the client is done with the response then.
      if (this.#sent >= this.#total) break
      await new Promise((resolve) => setTimeout(resolve, (piece.length / rate) * 1000))
    }
    return true
  }

  async #cutAfter(head: Buffer): Promise<void> {
    this.#cut = true
    const socket = this.#response.socket
    await new Promise<void>((resolve) => {
      if (head.length === 0) this.#response.flushHeaders()
      this.#response.write(head, () => resolve())
      if (head.length === 0) resolve()
    })
    if (!socket) return
    if (this.#fault?.kind === "reset") {
      // Let the client read what was sent before the RST arrives: a receiver that gets an RST
      // first discards unread data, and the fault is "reset mid-body", not "no answer".
      await new Promise((resolve) => setTimeout(resolve, RESET_GRACE_MS))
      // A TLS socket has no TCP handle to reset: it is destroyed without close_notify.
      if (socket instanceof TLSSocket) socket.destroy()
      else socket.resetAndDestroy()
    } else socket.end()
  }
}

const RESET_GRACE_MS = 50

const validate = (spec: FaultSpec): void => {
  if (!isFaultKind(spec.kind)) throw new RangeError(`unknown fault kind ${String(spec.kind)}`)
  if (typeof spec.path !== "string" || spec.path.length === 0 || !spec.path.startsWith("/")) {
    throw new RangeError("path must be a pattern starting with /")
  }
  if (spec.count !== undefined && !(Number.isInteger(spec.count) && spec.count >= 1)) {
    throw new RangeError("count must be an integer ≥ 1")
  }
  if (spec.probability !== undefined && !(spec.probability > 0 && spec.probability <= 1)) {
    throw new RangeError("probability must be in (0, 1]")
  }
  if (spec.maxDelayMs !== undefined && spec.maxDelayMs < (spec.delayMs ?? DEFAULT_LATENCY_MS)) {
    throw new RangeError("maxDelayMs must be at least delayMs")
  }
  for (const key of ["retryAfterSeconds", "afterBytes", "bytesPerSecond", "delayMs", "maxDelayMs"] as const) {
    const value = spec[key]
    if (value !== undefined && !(Number.isInteger(value) && value >= (key === "bytesPerSecond" ? 1 : 0))) {
      throw new RangeError(`${key} must be a non-negative integer`)
    }
  }
}

const globCache = new Map<string, RegExp>()

const globToRegExp = (pattern: string): RegExp => {
  let regexp = globCache.get(pattern)
  if (regexp === undefined) {
    const source = pattern
      .split("**")
      .map((part) =>
        part
          .split("*")
          .map((literal) => literal.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
          .join("[^/]*")
      )
      .join(".*")
    regexp = new RegExp(`^${source}$`)
    globCache.set(pattern, regexp)
  }
  return regexp
}
