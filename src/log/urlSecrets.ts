/**
 * The parts of an outbound URL a receiver may echo back in an error answer, as literals for
 * the Scrubber: its user and password, its query (whole and each value), its fragment, the
 * path segments that look like tokens (holding anything but letters: a Discord webhook's id
 * and token, an Apprise key, a secret path), and, for a URL that is a secret itself (a
 * `[[notify]]` URL, whose ntfy topic is its whole path), the whole path.
 *
 * A segment made of letters alone (`jellyfin`, `webhooks`, `notify`) is a route word, not a
 * token: registering it would hide that word from every log line. Each part is given raw
 * and percent-decoded (a server may echo either).
 */
export const urlSecrets = (url: string, options: { readonly wholePath: boolean }): ReadonlyArray<string> => {
  if (!URL.canParse(url)) return []
  const parsed = new URL(url)
  if (!OUTBOUND_SCHEMES.has(parsed.protocol)) return []
  const parts: Array<string> = [parsed.username, parsed.password, parsed.search.slice(1), parsed.hash.slice(1)]
  for (const [, value] of parsed.searchParams) parts.push(value)
  const path = parsed.pathname.replace(/^\/+|\/+$/g, "")
  if (options.wholePath) parts.push(path)
  for (const segment of path.split("/")) if (!/^[A-Za-z]*$/.test(segment)) parts.push(segment)
  const found = new Set<string>()
  for (const part of parts) {
    if (part === "") continue
    found.add(part)
    found.add(safeDecode(part))
  }
  return [...found]
}

/** The schemes of outbound URLs (`ntfy://` is an ntfy target's, as Apprise spells it). */
const OUTBOUND_SCHEMES: ReadonlySet<string> = new Set(["http:", "https:", "ntfy:", "ntfys:"])

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
