/**
 * The spec's rule for a `webhook_url`: an absolute https URL, without credentials, on a host
 * the public Internet can reach (the service delivers from its side, not from this
 * network). Pure and syntactic: no DNS. The API client checks it before POST /downloads
 * (api/requestChecks.ts) and the configuration checks `webhooks.public_url` with it.
 *
 * Not public: loopback, private, link-local, carrier-grade NAT, multicast and reserved IPv4
 * ranges; IPv6 loopback, unspecified, unique-local, link-local and IPv4-mapped addresses;
 * names without a dot (a LAN name) and names under the special-use or home-network domains
 * (localhost, local, internal, lan, home, home.arpa, test, invalid, example). The emulator
 * holds the service's side to the same rule.
 */
import { isIP } from "node:net"

/** Why `url` cannot be a `webhook_url`, or undefined when it can. */
export const webhookUrlProblem = (url: string): string | undefined => {
  if (!URL.canParse(url)) return "must be an absolute https URL"
  const parsed = new URL(url)
  if (parsed.protocol !== "https:") return "must use https"
  if (parsed.username !== "" || parsed.password !== "") return "must not embed credentials"
  if (!isPublicHost(parsed.hostname)) return "must name a public host (the service delivers from the Internet)"
  return undefined
}

/** `hostname` as URL.hostname gives it (IPv6 in brackets or not, any case). */
export const isPublicHost = (hostname: string): boolean => {
  const host = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase()
  const family = isIP(host)
  if (family === 4) {
    const [a = 0, b = 0] = host.split(".").map(Number)
    return !(
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    )
  }
  if (family === 6) {
    return !(
      host === "::" ||
      host === "::1" ||
      /^f[cd]/.test(host) ||
      /^fe[89ab]/.test(host) ||
      host.startsWith("::ffff:")
    )
  }
  if (!host.includes(".")) return false
  return !/(^|\.)(localhost|local|internal|lan|home|home\.arpa|test|invalid|example)$/.test(host)
}
