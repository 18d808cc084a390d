/**
 * A small range-capable CDN for the transfer tests: serves in-memory files with ETag,
 * Last-Modified, Range and If-Range, records every request's headers, counts the body
 * bytes it sends, and misbehaves on demand (the `faults` switches).
 *
 * Links are `http://127.0.0.1:<port>/f/<name>?token=<t>` (https with a TLS identity); a token
 * listed in `expired` gets 403, so a test can play "link expired" by adding one.
 */
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as Tls from "node:tls"

export interface ServedFile {
  content: Buffer
  etag: string | null
  lastModified: string | null
}

export interface Faults {
  /** Answer 200 with the whole body to every request, Range or not. */
  ignoreRange: boolean
  /** Shift the start of every 206 by this many bytes (a wrong Content-Range). */
  shiftContentRange: number
  /** Claim this total in Content-Range instead of the real size. */
  wrongTotal: number | null
  /** Answer the next N requests with `failStatus`. */
  failNext: number
  failStatus: number
  /** Cut the connection (RST) after sending this many body bytes, for the next `cutTimes` responses. */
  cutAfter: number | null
  cutTimes: number
  /** End the response cleanly (FIN) after this many body bytes, short of Content-Length, `truncateTimes` times. */
  truncateAfter: number | null
  truncateTimes: number
  /** Stop sending (connection left open) after this many body bytes, `stallTimes` times. */
  stallAfter: number | null
  stallTimes: number
  /** Send body bytes at most this fast (bytes per second, over all responses); 0 = as fast as possible. */
  rate: number
  /** Send each response's body at most this fast (a CDN capping each connection); 0 = no cap. */
  ratePerResponse: number
  /** After this many body bytes of the next response with token T, T expires and the connection is cut (once). */
  expireTokenAfter: number | null
  /** Requests to /r/<name> redirect to this base (another origin) + /f/<name>. */
  redirectBase: string | null
  /** Requests to /r/<name> redirect to themselves. */
  redirectLoop: boolean
  /** Send bodies chunked (no Content-Length). */
  chunked: boolean
  /** Send bodies without Content-Length or chunks, ended by closing the connection. */
  closeDelimited: boolean
  /** Hold every response body until this many are open at once (then never again); 0 = no hold. */
  holdUntilPumping: number
}

/** A server's private key and certificate (PEM), to serve https. */
export interface TlsIdentity {
  readonly key: string
  readonly cert: string
}

export interface LoggedRequest {
  readonly method: string
  readonly url: string
  readonly headers: Http.IncomingHttpHeaders
  readonly status: number
  /** The client's port: one per connection. */
  readonly remotePort: number
}

export class RangeServer {
  readonly files = new Map<string, ServedFile>()
  readonly log: Array<LoggedRequest> = []
  readonly expired = new Set<string>()
  faults: Faults = noFaults()
  /** Body bytes written to sockets, per file name. */
  readonly sent = new Map<string, number>()
  private server: Http.Server | Https.Server
  private readonly scheme: "http" | "https"
  private readonly sockets = new Set<Net.Socket>()
  port = 0

  constructor(tls?: TlsIdentity) {
    const handle = (req: Http.IncomingMessage, res: Http.ServerResponse) => this.handle(req, res)
    this.server = tls === undefined ? Http.createServer(handle) : Https.createServer(tls, handle)
    this.scheme = tls === undefined ? "http" : "https"
    this.server.on("connection", (s) => {
      this.connections++
      this.sockets.add(s)
      s.on("close", () => {
        this.sockets.delete(s)
        if (this.sockets.size === 0) for (const w of this.closedWaiters.splice(0)) w()
      })
    })
  }

  static async start(tls?: TlsIdentity): Promise<RangeServer> {
    const s = new RangeServer(tls)
    await new Promise<void>((resolve) => s.server.listen(0, "127.0.0.1", resolve))
    const address = s.server.address()
    s.port = address !== null && typeof address === "object" ? address.port : 0
    return s
  }

  /** Closes the kept-alive connections that wait for a request, as a server's idle timeout would. */
  closeIdleConnections(): void {
    this.server.closeIdleConnections()
  }

  /** Resolves once no connection is open. */
  whenConnectionsClosed(): Promise<void> {
    if (this.sockets.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.closedWaiters.push(resolve))
  }

  private readonly closedWaiters: Array<() => void> = []

  /** Connections accepted so far. */
  connections = 0

  get base(): string {
    return `${this.scheme}://127.0.0.1:${this.port}`
  }

  link(name: string, token = "t0", prefix = "f"): string {
    return `${this.base}/${prefix}/${name}?token=${token}`
  }

  bytesSent(name: string): number {
    return this.sent.get(name) ?? 0
  }

  /** Resolves once `threshold` body bytes of `name` have been sent in all. */
  sentAtLeast(name: string, threshold: number): Promise<void> {
    if (this.bytesSent(name) >= threshold) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ name, threshold, resolve }))
  }

  /** Resolves once the log satisfies `done` (checked at each request logged). */
  loggedUntil(done: (log: ReadonlyArray<LoggedRequest>) => boolean): Promise<void> {
    if (done(this.log)) return Promise.resolve()
    return new Promise((resolve) => this.logWaiters.push({ done, resolve }))
  }

  /** Resolves once more than `count` response bodies have been sent at once (`maxPumping`). */
  pumpedAbove(count: number): Promise<void> {
    if (this.maxPumping > count) return Promise.resolve()
    return new Promise((resolve) => this.peakWaiters.push({ count, resolve }))
  }

  /** Resolves when no response body is being sent (a killed client's responses have ended). */
  whenIdle(): Promise<void> {
    if (this.pumping === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private pumping = 0
  /** The most response bodies ever sent at once. */
  maxPumping = 0
  private readonly idleWaiters: Array<() => void> = []
  private readonly peakWaiters: Array<{ count: number; resolve: () => void }> = []

  /** Pacing state for `faults.rate`; reset to restart the clock. */
  pace: { since: number; bytes: number } | null = null

  private readonly waiters: Array<{ name: string; threshold: number; resolve: () => void }> = []
  private readonly logWaiters: Array<{ done: (log: ReadonlyArray<LoggedRequest>) => boolean; resolve: () => void }> = []

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private handle(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.base)
    const entry = (status: number) => {
      this.log.push({
        method: req.method ?? "",
        url: url.pathname + url.search,
        headers: req.headers,
        status,
        remotePort: req.socket.remotePort ?? 0
      })
      for (const w of this.logWaiters.filter((w) => w.done(this.log))) {
        this.logWaiters.splice(this.logWaiters.indexOf(w), 1)
        w.resolve()
      }
    }
    const [, prefix, name = ""] = url.pathname.split("/")
    const token = url.searchParams.get("token") ?? ""
    const f = this.faults
    if (prefix === "r" && f.redirectLoop) {
      entry(302)
      res.writeHead(302, { location: url.pathname + url.search }).end()
      return
    }
    if (prefix === "r" && f.redirectBase !== null) {
      entry(302)
      res.writeHead(302, { location: `${f.redirectBase}/f/${name}?token=${token}` }).end()
      return
    }
    const file = this.files.get(name)
    if (prefix !== "f" || file === undefined) {
      entry(404)
      res.writeHead(404).end()
      return
    }
    if (this.expired.has(token)) {
      entry(403)
      res.writeHead(403).end("link expired")
      return
    }
    if (f.failNext > 0) {
      f.failNext--
      entry(f.failStatus)
      res.writeHead(f.failStatus).end()
      return
    }
    const size = file.content.length
    const validators: Record<string, string> = {}
    if (file.etag !== null) validators.etag = file.etag
    if (file.lastModified !== null) validators["last-modified"] = file.lastModified
    let range = parseRange(req.headers.range, size)
    const ifRange = req.headers["if-range"]
    if (range !== undefined && ifRange !== undefined && ifRange !== file.etag && ifRange !== file.lastModified) {
      range = undefined
    }
    if (f.ignoreRange) range = undefined
    if (f.closeDelimited) {
      res.useChunkedEncodingByDefault = false
      res.shouldKeepAlive = false
    }
    let start = 0
    let end = size
    if (range === undefined) {
      entry(200)
      res.writeHead(200, { ...validators, ...this.length(size), "accept-ranges": "bytes" })
    } else {
      start = range.start
      end = range.end
      const shown = start + f.shiftContentRange
      entry(206)
      res.writeHead(206, {
        ...validators,
        ...this.length(end - start),
        "content-range": `bytes ${shown}-${shown + end - start - 1}/${f.wrongTotal ?? size}`,
        "accept-ranges": "bytes"
      })
    }
    this.pump(req, res, name, token, file.content, start, end)
  }

  private length(n: number): Record<string, string> {
    return this.faults.chunked || this.faults.closeDelimited ? {} : { "content-length": String(n) }
  }

  /** Sends content[start, end) in 64 KiB pieces, honouring backpressure, pacing and faults. */
  private pump(
    req: Http.IncomingMessage,
    res: Http.ServerResponse,
    name: string,
    token: string,
    content: Buffer,
    start: number,
    end: number
  ): void {
    const f = this.faults
    const cut = f.cutTimes-- > 0 ? f.cutAfter : null
    const truncate = f.truncateTimes-- > 0 ? f.truncateAfter : null
    const stall = f.stallTimes-- > 0 ? f.stallAfter : null
    const expireAt = f.expireTokenAfter
    let sent = 0
    let pos = start
    const since = Date.now()
    this.pumping++
    this.maxPumping = Math.max(this.maxPumping, this.pumping)
    for (const w of this.peakWaiters.filter((w) => this.maxPumping > w.count)) {
      this.peakWaiters.splice(this.peakWaiters.indexOf(w), 1)
      w.resolve()
    }
    let done = false
    const finish = () => {
      if (done) return
      done = true
      if (--this.pumping === 0) for (const w of this.idleWaiters.splice(0)) w()
    }
    res.on("close", finish)
    const step = () => {
      if (this.maxPumping < f.holdUntilPumping) {
        this.pumpedAbove(f.holdUntilPumping - 1).then(step)
        return
      }
      while (pos < end) {
        if (req.socket.destroyed) return
        let n = Math.min(64 * 1024, end - pos)
        const limit = Math.min(cut ?? Infinity, truncate ?? Infinity, stall ?? Infinity, expireAt ?? Infinity)
        if (sent >= limit) {
          if (sent === expireAt) {
            this.expired.add(token)
            f.expireTokenAfter = null
            cutConnection(req.socket)
          } else if (sent === cut) cutConnection(req.socket)
          else if (sent === truncate) req.socket.end()
          // stall: send nothing more, keep the socket open
          return
        }
        n = Math.min(n, limit - sent)
        if (f.ratePerResponse > 0) {
          const wait = since + ((sent + n) * 1000) / f.ratePerResponse - Date.now()
          if (wait > 1) {
            setTimeout(step, wait)
            return
          }
        }
        if (f.rate > 0) {
          if (this.pace === null) this.pace = { since: Date.now(), bytes: 0 }
          const due = this.pace.since + ((this.pace.bytes + n) * 1000) / f.rate
          const wait = due - Date.now()
          if (wait > 1) {
            setTimeout(step, wait)
            return
          }
        }
        const ok = res.write(content.subarray(pos, pos + n))
        if (this.pace !== null) this.pace.bytes += n
        pos += n
        sent += n
        const total = (this.sent.get(name) ?? 0) + n
        this.sent.set(name, total)
        for (let i = this.waiters.length - 1; i >= 0; i--) {
          const w = this.waiters[i]
          if (w !== undefined && w.name === name && total >= w.threshold) {
            this.waiters.splice(i, 1)
            w.resolve()
          }
        }
        if (!ok) {
          res.once("drain", step)
          return
        }
      }
      res.end()
    }
    step()
  }
}

export const noFaults = (): Faults => ({
  ignoreRange: false,
  shiftContentRange: 0,
  wrongTotal: null,
  failNext: 0,
  failStatus: 503,
  cutAfter: null,
  cutTimes: 0,
  truncateAfter: null,
  truncateTimes: 0,
  stallAfter: null,
  stallTimes: 0,
  rate: 0,
  ratePerResponse: 0,
  expireTokenAfter: null,
  redirectBase: null,
  redirectLoop: false,
  chunked: false,
  holdUntilPumping: 0,
  closeDelimited: false
})

/** Deterministic pseudo-random content (xorshift), so corruption anywhere is visible. */
export const makeContent = (size: number, seed = 1): Buffer => {
  const b = Buffer.allocUnsafe(size)
  let x = seed >>> 0 || 1
  let i = 0
  for (; i + 4 <= size; i += 4) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    b.writeUInt32LE(x >>> 0, i)
  }
  for (; i < size; i++) b[i] = i & 0xff
  return b
}

/** An RST on TCP; a TLS socket (no TCP handle to reset) is destroyed without close_notify. */
const cutConnection = (socket: Net.Socket): void => {
  if (socket instanceof Tls.TLSSocket) socket.destroy()
  else socket.resetAndDestroy()
}

const parseRange = (header: string | undefined, size: number): { start: number; end: number } | undefined => {
  const m = header === undefined ? null : /^bytes=(\d+)-(\d*)$/.exec(header)
  if (m === null) return undefined
  const start = Number(m[1])
  const last = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (start > last) return undefined
  return { start, end: last + 1 }
}
