/**
 * The connections a local server holds, bounded per client address and in total, so that no
 * client can shut the others out by holding connections open.
 *
 * A connection is idle while no request of it is being answered: before its first complete
 * request head, and between requests when kept alive. A connection beyond a bound takes the
 * place of an idle one:
 * - beyond `perAddress` from its address: that address's oldest idle connection closes;
 * - beyond `total`: the oldest idle connection of the address holding the most idle ones
 *   closes (a client holding few connections loses them last);
 * and when none in the way is idle (all of them are serving requests), the newcomer is
 * closed at once. A connection serving a request is never closed to make room.
 *
 * So 500 idle sockets from one address leave every other client, and that address's next
 * request, served at once; what an idle socket costs the attacker is a connection closed.
 * Addresses are compared as the peer's IP address (an IPv4 address mapped into IPv6 is
 * the IPv4 address).
 */
import type * as Http from "node:http"
import type * as Net from "node:net"

export interface ConnectionLimits {
  /** The most connections held at once. */
  readonly total: number
  /** The most connections held at once from one client address. */
  readonly perAddress: number
}

/** Applies `limits` to `server`'s connections, from now on. */
export const limitConnections = (server: Http.Server, limits: ConnectionLimits): void => {
  /** Each address's connections, in the order they came. */
  const byAddress = new Map<string, Set<Net.Socket>>()
  /** Requests being answered, per connection; a connection not in it is idle. */
  const serving = new Map<Net.Socket, number>()
  const addressOf = new WeakMap<Net.Socket, string>()
  let held = 0

  const forget = (socket: Net.Socket) => {
    const address = addressOf.get(socket)
    const mine = address === undefined ? undefined : byAddress.get(address)
    if (address === undefined || mine === undefined || !mine.delete(socket)) return
    held -= 1
    serving.delete(socket)
    if (mine.size === 0) byAddress.delete(address)
  }

  /** Closes the oldest idle connection of `mine`; false when every one is serving a request. */
  const makeRoom = (mine: ReadonlySet<Net.Socket> | undefined): boolean => {
    for (const socket of mine ?? []) {
      if (serving.has(socket)) continue
      forget(socket)
      socket.destroy()
      return true
    }
    return false
  }

  /** The address holding the most idle connections. */
  const mostIdle = (): ReadonlySet<Net.Socket> | undefined => {
    let most: ReadonlySet<Net.Socket> | undefined
    let mostIdleCount = 0
    for (const mine of byAddress.values()) {
      let idle = 0
      for (const socket of mine) if (!serving.has(socket)) idle += 1
      if (idle > mostIdleCount) {
        most = mine
        mostIdleCount = idle
      }
    }
    return most
  }

  server.on("connection", (socket: Net.Socket) => {
    const address = clientAddress(socket)
    if (address === undefined) return socket.destroy()
    const mine = byAddress.get(address)
    if ((mine?.size ?? 0) >= limits.perAddress && !makeRoom(mine)) return socket.destroy()
    if (held >= limits.total && !makeRoom(mostIdle())) return socket.destroy()
    const set = byAddress.get(address) ?? new Set<Net.Socket>()
    byAddress.set(address, set)
    set.add(socket)
    addressOf.set(socket, address)
    held += 1
    socket.once("close", () => forget(socket))
  })

  const started = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const socket = request.socket
    if (!addressOf.has(socket)) return
    serving.set(socket, (serving.get(socket) ?? 0) + 1)
    response.once("close", () => {
      const left = (serving.get(socket) ?? 1) - 1
      if (left > 0) serving.set(socket, left)
      else serving.delete(socket)
    })
  }
  server.on("request", started)
  server.on("checkContinue", started)
  // An upgraded connection is the handler's until it closes.
  server.on("upgrade", (request: Http.IncomingMessage) => {
    if (addressOf.has(request.socket)) serving.set(request.socket, 1)
  })
}

/** The peer's IP address; an IPv4 address mapped into IPv6 as the IPv4 address. */
const clientAddress = (socket: Net.Socket): string | undefined => {
  const address = socket.remoteAddress
  return address?.startsWith("::ffff:") === true && address.includes(".") ? address.slice(7) : address
}
