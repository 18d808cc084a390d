/**
 * The lean reader's connections: kept-alive sockets per origin (TCP for http, TLS for
 * https) and the read buffers reused by every request. A socket hands its reads to the
 * exchange running on it (leanGet.ts).
 *
 * TLS checks what Node checks by default: the peer's certificate against Node's CA list (its
 * bundled roots, NODE_EXTRA_CA_CERTS, and the system's store under NODE_OPTIONS=--use-system-ca)
 * and the link's host name, also sent as SNI. Only HTTP/1.1 is offered (ALPN). Reading the
 * system's store always would cost ~6 MB and 50 ms for roots Node bundles already.
 */
import * as Net from "node:net"
import * as Tls from "node:tls"
import { nodeTimers, type Timer } from "../pacing/systemClock.ts"

/** What a connection needs of the exchange running on it. */
export interface LeanReader {
  /** Where the next socket read lands. */
  readTarget(): Buffer
  /** A socket read of `n` bytes into `landed`; false pauses the socket. */
  onRead(n: number, landed: Buffer): boolean
  onSocketEnd(error: Error | null): void
}

const IDLE_SOCKET_MS = 15_000
/**
 * Free buffers are kept for the next request while transfers run (a fresh 512 KiB buffer
 * costs 128 page faults), and let go once none has come back for this long: a daemon
 * should not hold every connection's buffers until its next download.
 */
const IDLE_BUFFERS_MS = IDLE_SOCKET_MS

/** Kept-alive sockets per origin, and the read buffers reused by every request. */
export class LeanPool {
  private readonly idle = new Map<string, Array<LeanConn>>()
  private readonly free: Array<Buffer> = []
  private freeTimer: Timer | null = null
  private closed = false
  readonly bufferSize: number
  /** Buffers allocated so far (each `bufferSize` bytes): what the byte path cost in memory. */
  allocated = 0

  constructor(bufferSize: number) {
    // A response head's trailing body bytes (up to 16 KiB) must fit in one buffer.
    this.bufferSize = Math.max(bufferSize, 16 * 1024)
  }

  takeBuffer(): Buffer {
    const kept = this.free.pop()
    if (kept !== undefined) return kept
    this.allocated++
    return Buffer.allocUnsafeSlow(this.bufferSize)
  }

  giveBuffer(buffer: Buffer): void {
    if (this.free.length >= 64 || this.closed) return
    this.free.push(buffer)
    if (this.freeTimer === null) this.freeTimer = nodeTimers.after(IDLE_BUFFERS_MS, () => this.dropIdleBuffers(), true)
    else this.freeTimer.restart()
  }

  private dropIdleBuffers(): void {
    this.freeTimer = null
    this.free.length = 0
  }

  /** An idle socket to `url`'s origin, or a new one. */
  connection(url: URL): { readonly conn: LeanConn; readonly reused: boolean } {
    const list = this.idle.get(url.origin)
    const reused = list?.pop()
    if (reused !== undefined) return { conn: reused, reused: true }
    return { conn: this.fresh(url), reused: false }
  }

  /** A new socket to `url`'s origin. */
  fresh(url: URL): LeanConn {
    return new LeanConn(this, url)
  }

  release(conn: LeanConn): void {
    if (this.closed || conn.socket.destroyed) {
      conn.destroy()
      return
    }
    const list = this.idle.get(conn.origin) ?? []
    list.push(conn)
    this.idle.set(conn.origin, list)
    conn.idleSince()
  }

  forget(conn: LeanConn): void {
    const list = this.idle.get(conn.origin)
    const i = list?.indexOf(conn) ?? -1
    if (list !== undefined && i >= 0) list.splice(i, 1)
  }

  close(): void {
    this.closed = true
    this.freeTimer?.cancel()
    this.free.length = 0
    for (const list of this.idle.values()) for (const c of list) c.destroy()
    this.idle.clear()
  }
}

/** One socket; the exchange running on it receives its reads. */
export class LeanConn {
  readonly socket: Net.Socket
  readonly origin: string
  exchange: LeanReader | null = null
  private readonly scratch = Buffer.allocUnsafe(4096)
  private idleTimer: Timer | null = null
  private readonly pool: LeanPool

  constructor(pool: LeanPool, url: URL) {
    this.pool = pool
    this.origin = url.origin
    const host = url.hostname.replace(/^\[|\]$/g, "")
    // Node asks for the next target after each read (and once at connect): a read can land
    // in `scratch` when no exchange was running then; the exchange copies it over. TLS
    // sockets decrypt straight into these targets too.
    const onread = {
      buffer: () => this.exchange?.readTarget() ?? this.scratch,
      callback: (n: number, landed: Buffer) =>
        this.exchange === null ? this.unexpected() : this.exchange.onRead(n, landed)
    }
    if (url.protocol === "https:") {
      // Node documents `onread` for tls.connect (since 14.1); @types/node does not declare it.
      const options: Tls.ConnectionOptions & Pick<Net.SocketConstructorOpts, "onread"> = {
        host,
        port: Number(url.port || 443),
        // SNI carries names only (an IP address is not a valid server name).
        ...(Net.isIP(host) === 0 ? { servername: host } : {}),
        ALPNProtocols: ["http/1.1"],
        onread
      }
      this.socket = Tls.connect(options)
    } else this.socket = Net.connect({ host, port: Number(url.port || 80), onread })
    this.socket.setNoDelay(true)
    this.socket.on("error", (e) => this.exchange?.onSocketEnd(e))
    this.socket.on("end", () => this.exchange?.onSocketEnd(null))
    this.socket.on("close", () => {
      this.pool.forget(this)
      this.exchange?.onSocketEnd(null)
    })
  }

  idleSince(): void {
    this.idleTimer = nodeTimers.after(
      IDLE_SOCKET_MS,
      () => {
        this.pool.forget(this)
        this.destroy()
      },
      true
    )
  }

  busy(exchange: LeanReader): void {
    this.idleTimer?.cancel()
    this.idleTimer = null
    this.exchange = exchange
  }

  destroy(): void {
    this.idleTimer?.cancel()
    this.exchange = null
    this.socket.destroy()
  }

  /** Bytes on an idle socket: the server broke the protocol; the socket is dropped. */
  private unexpected(): false {
    this.pool.forget(this)
    this.destroy()
    return false
  }
}
