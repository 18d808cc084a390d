/**
 * What a hostile client does to a local server, over raw TCP on loopback: connections that
 * send nothing, from a chosen local address (any 127.x.y.z is this host on Linux, so a test
 * can be several clients), and requests written by hand whose answer is read as soon as its
 * head arrives, whether or not the client finished sending.
 */
import * as Net from "node:net"
import { Effect } from "effect"

export interface IdleSockets {
  readonly sockets: ReadonlyArray<Net.Socket>
  /** How many of them the server has not closed. */
  readonly open: () => number
}

/**
 * `count` connections to `origin` from `localAddress` that send nothing, each connected
 * before the next is opened; destroyed with the test's scope.
 */
export const idleSockets = (origin: string, count: number, localAddress = "127.0.0.1") =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const { hostname, port } = new URL(origin)
      const sockets: Array<Net.Socket> = []
      for (let i = 0; i < count; i++) {
        sockets.push(
          await new Promise<Net.Socket>((resolve, reject) => {
            const socket = Net.connect({ host: hostname, port: Number(port), localAddress })
            // A socket the server closes is read to its end and forgotten.
            socket.on("error", () => undefined)
            socket.resume()
            socket.once("connect", () => resolve(socket))
            socket.once("error", reject)
          })
        )
      }
      const result: IdleSockets = {
        sockets,
        open: () => sockets.filter((s) => !s.destroyed && !s.readableEnded).length
      }
      return result
    }),
    ({ sockets }) =>
      Effect.sync(() => {
        for (const socket of sockets) socket.destroy()
      })
  )

export interface RawAnswer {
  readonly status: number
  /** The whole answer, head and body. */
  readonly text: string
  /** Whether the client had written everything `send` gave it when the answer was whole. */
  readonly sentAll: boolean
}

/**
 * Writes `head` on a fresh connection from `localAddress`, then lets `send` write more
 * (chunk by chunk, as long as it likes); the answer once it is whole (a body of its
 * Content-Length, or all that came before the server closed). The connection is destroyed
 * once answered.
 */
export const rawExchange = (
  origin: string,
  head: string,
  send: (socket: Net.Socket) => Promise<void> = async () => undefined,
  localAddress = "127.0.0.1"
) =>
  Effect.callback<RawAnswer, Error>((resume) => {
    const { hostname, port } = new URL(origin)
    const socket = Net.connect({ host: hostname, port: Number(port), localAddress })
    let text = ""
    let sentAll = false
    let done = false
    const answered = (status: number) => {
      done = true
      socket.destroy()
      resume(Effect.succeed({ status, text, sentAll }))
    }
    socket.on("data", (data: Buffer) => {
      text += data.toString("latin1")
      const complete = completeAnswer(text)
      if (!done && complete !== undefined) answered(complete)
    })
    // Writes after the server closed fail with EPIPE/ECONNRESET: the answer is what counts.
    socket.on("error", () => undefined)
    socket.on("close", () => {
      if (done) return
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)
      if (status !== null) answered(Number(status[1]))
      else resume(Effect.fail(new Error(`closed without an answer: ${JSON.stringify(text.slice(0, 200))}`)))
    })
    socket.write(head, () => {
      send(socket).then(
        () => {
          sentAll = true
        },
        () => undefined
      )
    })
    return Effect.sync(() => socket.destroy())
  })

/** Writes `bytes` in chunks of `chunk` bytes, each after the previous one left, until done or closed. */
export const writeSlowly = (socket: Net.Socket, bytes: number, chunk = 16 * 1024, encode = (b: Buffer) => b) =>
  new Promise<void>((resolve, reject) => {
    let left = bytes
    const next = () => {
      if (socket.destroyed) return reject(new Error("closed by the server"))
      if (left <= 0) return resolve()
      const size = Math.min(chunk, left)
      left -= size
      socket.write(encode(Buffer.alloc(size, "a")), (error) => (error ? reject(error) : setImmediate(next)))
    }
    next()
  })

/** A chunk of a `Transfer-Encoding: chunked` body. */
export const chunked = (data: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")])

/** The status of `text` once it holds a whole answer (its head and a body of Content-Length bytes). */
const completeAnswer = (text: string): number | undefined => {
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)
  const end = text.indexOf("\r\n\r\n")
  if (status === null || end < 0) return undefined
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))
  if (length === null) return undefined
  return Buffer.byteLength(text.slice(end + 4), "latin1") >= Number(length[1]) ? Number(status[1]) : undefined
}
