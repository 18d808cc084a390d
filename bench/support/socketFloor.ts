/**
 * The floor of a Node 24 process for one big download, as a diagnostic row beside dlsync's
 * whole process: one socket (TLS through `tls.connect` with the benchmark's certificate, or
 * TCP), one GET, every read landing through `onread` in one reused 1 MiB buffer that is
 * written at its offset with a synchronous positional write, then one fdatasync. No
 * framework, no segments, no journal: what any Node program pays here for the bytes alone.
 *   node socketFloor.ts <url> <output file> [<CA certificate file>]
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Tls from "node:tls"

const [urlText = "", output = "", caFile] = process.argv.slice(2)
const url = new URL(urlText)
const port = Number(url.port || (url.protocol === "https:" ? 443 : 80))
const fd = Fs.openSync(output, "w")
const buffer = Buffer.allocUnsafe(1024 * 1024)
/** Bytes of the head still being read; null once the body starts. */
let head: Buffer | null = Buffer.alloc(0)
let written = 0
let length = -1

const finish = (error?: Error) => {
  if (error !== undefined || written !== length) {
    process.stderr.write(`socketFloor: ${error?.message ?? `${written} of ${length} bytes`}\n`)
    process.exit(1)
  }
  Fs.fdatasyncSync(fd)
  Fs.closeSync(fd)
  process.exit(0)
}

const body = (chunk: Buffer) => {
  Fs.writeSync(fd, chunk, 0, chunk.length, written)
  written += chunk.length
  if (written >= length) finish()
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
    if (!/^HTTP\/1\.1 200 /.test(text)) finish(new Error(text.split("\r\n")[0]))
    length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? -1)
    const rest = head.subarray(end + 4)
    head = null
    if (rest.length > 0) body(rest)
    return true
  }
}

const request = `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`
const socket =
  url.protocol === "https:"
    ? // Node's TLS socket takes onread as net's does; its types do not list it.
      Tls.connect({
        host: url.hostname,
        port,
        ...(caFile === undefined ? {} : { ca: Fs.readFileSync(caFile) }),
        onread
      } as Tls.ConnectionOptions)
    : Net.connect({ host: url.hostname, port, onread })
socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => socket.write(request))
socket.once("error", finish)
socket.once("end", () => finish())
