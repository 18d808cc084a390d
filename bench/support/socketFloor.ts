/**
 * The floor of a Node 24 process for one big download, as a diagnostic row beside dlsync's
 * whole process: `connections` sockets (TLS through `tls.connect` with the benchmark's
 * certificate, or TCP), each one ranged GET for its share of the file, every read landing
 * through `onread` in the socket's reused 1 MiB buffer and written at its offset with a
 * synchronous positional write, then one fdatasync. No framework, no journal, no adapting:
 * what any Node program pays here for the bytes alone, at the count of connections it uses
 * (1, as dlsync ends up on where one fills the link; 4, as rclone's streams).
 *   node socketFloor.ts <url> <output file> <size> <connections> [<CA certificate file>]
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Tls from "node:tls"

const [urlText = "", output = "", sizeText = "", connectionsText = "1", caFile] = process.argv.slice(2)
const url = new URL(urlText)
const port = Number(url.port || (url.protocol === "https:" ? 443 : 80))
const size = Number(sizeText)
const connections = Number(connectionsText)
const ca = caFile === undefined ? undefined : Fs.readFileSync(caFile)
const fd = Fs.openSync(output, "w")
let finished = 0

const fail = (message: string) => {
  process.stderr.write(`socketFloor: ${message}\n`)
  process.exit(1)
}

const allDone = () => {
  if (++finished < connections) return
  Fs.fdatasyncSync(fd)
  Fs.closeSync(fd)
  process.exit(0)
}

/** Bytes [from, to) of the file, on a socket of their own. */
const fetchRange = (from: number, to: number) => {
  const buffer = Buffer.allocUnsafe(1024 * 1024)
  /** Bytes of the head still being read; null once the body starts. */
  let head: Buffer | null = Buffer.alloc(0)
  let pos = from
  const body = (chunk: Buffer) => {
    Fs.writeSync(fd, chunk, 0, chunk.length, pos)
    pos += chunk.length
    if (pos < to) return
    socket.destroy()
    allDone()
  }
  const onread = {
    buffer,
    callback: (n: number, buf: Uint8Array): boolean => {
      const chunk = Buffer.from(buf.buffer, buf.byteOffset, n)
      if (head === null) {
        body(chunk)
        return true
      }
      head = Buffer.concat([head, chunk])
      const end = head.indexOf("\r\n\r\n")
      if (end < 0) return true
      const text = head.subarray(0, end).toString("latin1")
      if (!/^HTTP\/1\.1 206 /.test(text)) fail(text.split("\r\n")[0] ?? "no status line")
      const rest = head.subarray(end + 4)
      head = null
      if (rest.length > 0) body(rest)
      return true
    }
  }
  const request = `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nRange: bytes=${from}-${to - 1}\r\nConnection: close\r\n\r\n`
  const socket =
    url.protocol === "https:"
      ? // Node's TLS socket takes onread as net's does; its types do not list it.
        Tls.connect({ host: url.hostname, port, ...(ca === undefined ? {} : { ca }), onread } as Tls.ConnectionOptions)
      : Net.connect({ host: url.hostname, port, onread })
  socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => socket.write(request))
  socket.once("error", (e) => fail(e.message))
  socket.once("end", () => {
    if (pos < to) fail(`${pos - from} of ${to - from} bytes`)
  })
}

for (let i = 0; i < connections; i++) {
  fetchRange(Math.floor((size * i) / connections), Math.floor((size * (i + 1)) / connections))
}
