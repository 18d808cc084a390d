/**
 * `server.listen`: where the health/metrics/status endpoint listens, or "off".
 *
 * The endpoint discloses file names (`/api/status`), so it stays on this host unless the
 * owner writes otherwise: the default is loopback, and every interface is reached only by
 * writing so ("0.0.0.0:7660", "[::]:7660" or ":7660"). Nothing is guessed: a bare port,
 * an unbracketed IPv6 address or a URL is an error that says what to write instead.
 *
 * Grammar (surrounding whitespace ignored):
 *   off                   no endpoint
 *   <ipv4>:<port>         e.g. 127.0.0.1:7660, 0.0.0.0:7660
 *   <hostname>:<port>     e.g. localhost:7660 (resolved when listening)
 *   [<ipv6>]:<port>       e.g. [::1]:7660, [::]:7660
 *   :<port>               every interface (IPv6 and IPv4 where the host has both)
 * with <port> a decimal integer in 1..65535.
 */
import { isIPv4, isIPv6 } from "node:net"
import { Effect, Predicate, Result, Schema, SchemaIssue, SchemaTransformation } from "effect"

/** A listen address; `host` undefined means every interface (written ":port"). */
export interface ListenAddress {
  readonly host: string | undefined
  readonly port: number
}

/** The decoded setting: no endpoint, or one address. */
export type ListenSetting = "off" | ListenAddress

/** The default when `server.listen` is not set: this host only. */
export const DEFAULT_LISTEN = "127.0.0.1:7660"
export const DEFAULT_LISTEN_ADDRESS: ListenAddress = { host: "127.0.0.1", port: 7660 }

/** Parses a `server.listen` value; the failure names what was expected and what was given. */
export const parseListen = (input: unknown): Result.Result<ListenSetting, string> => {
  if (Predicate.isNumber(input)) {
    return Result.fail(`${EXPECTED}; a bare port is ambiguous: write "127.0.0.1:${input}" or ":${input}", got ${input}`)
  }
  if (!Predicate.isString(input)) return Result.fail(`${EXPECTED}, got ${describe(input)}`)
  const text = input.trim()
  const got = `got ${JSON.stringify(input.length > 100 ? `${input.slice(0, 100)}…` : input)}`
  if (text === "") return Result.fail(`${EXPECTED}, got an empty text`)
  if (text.toLowerCase() === "off") return Result.succeed("off")
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    return Result.fail(`${EXPECTED}, not a URL (write "127.0.0.1:7660"), ${got}`)
  }
  if (/^\d+$/.test(text)) {
    return Result.fail(
      `${EXPECTED}; a bare port is ambiguous: write "127.0.0.1:${text}" (this host only) or ":${text}" (every interface), ${got}`
    )
  }

  let host: string | undefined
  let portText: string
  if (text.startsWith("[")) {
    const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(text)
    if (bracketed === null) return Result.fail(`${EXPECTED}; a bracketed IPv6 address ends with "]:<port>", ${got}`)
    const address = bracketed[1] ?? ""
    if (!isIPv6(address)) return Result.fail(`${EXPECTED}; "${address}" is not an IPv6 address, ${got}`)
    if (bracketed[2] === undefined) return Result.fail(`${EXPECTED}; the port is missing ("[${address}]:7660"), ${got}`)
    host = address
    portText = bracketed[2]
  } else {
    const colon = text.lastIndexOf(":")
    if (colon < 0) return Result.fail(`${EXPECTED}; the port is missing ("${text}:7660"), ${got}`)
    const hostText = text.slice(0, colon)
    portText = text.slice(colon + 1)
    if (hostText.includes(":")) {
      return Result.fail(`${EXPECTED}; an IPv6 address goes in brackets ("[::1]:7660"), ${got}`)
    }
    if (hostText !== "" && !isIPv4(hostText) && !isHostname(hostText)) {
      return Result.fail(`${EXPECTED}; "${hostText}" is neither an IPv4 address nor a host name, ${got}`)
    }
    host = hostText === "" ? undefined : hostText
  }

  if (!/^\d{1,5}$/.test(portText)) {
    return Result.fail(`${EXPECTED}; the port must be a number from 1 to 65535, ${got}`)
  }
  const port = Number(portText)
  if (port < 1 || port > 65535) return Result.fail(`${EXPECTED}; the port must be a number from 1 to 65535, ${got}`)
  return Result.succeed({ host, port })
}

/** The canonical text of a setting; `parseListen(formatListen(s))` gives `s` back. */
export const formatListen = (setting: ListenSetting): string => {
  if (setting === "off") return "off"
  if (setting.host === undefined) return `:${setting.port}`
  return isIPv6(setting.host) ? `[${setting.host}]:${setting.port}` : `${setting.host}:${setting.port}`
}

/** Whether only this host can reach the address (127.0.0.0/8, ::1, localhost). */
export const isLoopback = (address: ListenAddress): boolean => {
  const host = address.host?.toLowerCase()
  if (host === undefined) return false
  if (host === "localhost" || host === "::1") return true
  const v4 = host.startsWith("::ffff:") ? host.slice("::ffff:".length) : host
  return isIPv4(v4) && v4.startsWith("127.")
}

/** `server.listen` in the configuration: text → setting; encodes back to the canonical text. */
export const ListenSettingFromString = Schema.Unknown.pipe(
  Schema.decodeTo(
    Schema.Union([Schema.Literal("off"), Schema.Struct({ host: Schema.UndefinedOr(Schema.String), port: Schema.Int })]),
    SchemaTransformation.transformEffect<ListenSetting, unknown>({
      decode: (input) => {
        const result = parseListen(input)
        return Result.isFailure(result)
          ? Effect.fail(new SchemaIssue.InvalidValue({ message: result.failure }))
          : Effect.succeed(result.success)
      },
      encode: (setting) => Effect.succeed(formatListen(setting))
    })
  )
)

const EXPECTED = 'expected "host:port", "[ipv6]:port", ":port" (every interface) or "off"'

/** RFC 1123 host names; an all-digit last label is a mistyped IPv4 address, not a name. */
const isHostname = (text: string): boolean =>
  text.length <= 253 &&
  /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(text) &&
  !/(?:^|\.)\d+$/.test(text)

const describe = (input: unknown): string => {
  if (input === undefined) return "nothing"
  if (Predicate.isBoolean(input) || input === null) return String(input)
  if (Array.isArray(input)) return "a list"
  return `a ${typeof input === "object" ? "table" : typeof input}`
}
