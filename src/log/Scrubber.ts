/**
 * The scrubber: what stands between a secret and a log line (safety invariant 9).
 *
 * Contract: `text(s)` and `value(v)` return a copy with every secret it can recognize
 * replaced by `<redacted>`:
 * - `Redacted` values, wherever they sit;
 * - values under keys that name secrets (access_token, refresh_token, client_secret,
 *   api_key, password, authorization, cookie, …; camelCase and kebab-case too), in objects
 *   and in text (`refresh_token=…`, `"access_token":"…"`);
 * - bearer and basic credentials (`Bearer …`);
 * - API keys by their fixed prefix (the emulator's `dls_`, plus any configured) and
 *   webhook secrets (`whsec_…`); the prefix is kept so a reader knows what was there;
 * - the query string and fragment of a URL, unless every parameter is a known harmless
 *   API parameter (a signed CDN link carries its signature there), and user:password@;
 * - literal secret values registered at construction (the configured API key, whatever
 *   its prefix), and the parts of the outbound URLs registered that a receiver may echo
 *   (urlSecrets.ts: an ntfy topic, a Discord webhook token, a key in a query).
 * Values are also made JSON-safe: cycles, depth beyond 8, bigints and functions are
 * rendered as short text, so a log line can always be written.
 *
 * Known limit: a secret with no prefix, outside a known field and not registered cannot be
 * recognized, nor one shorter than MIN_LITERAL_LENGTH. Code must keep secrets `Redacted`.
 */
import { Predicate, Redacted } from "effect"
import { urlSecrets } from "./urlSecrets.ts"

export const REDACTED = "<redacted>"

export interface Scrubber {
  readonly text: (text: string) => string
  readonly value: (value: unknown) => unknown
}

export interface ScrubberOptions {
  /** Prefixes of the service's API keys (the emulator's `dls_` is always included). */
  readonly keyPrefixes?: ReadonlyArray<string>
  /**
   * Secret values known at start (e.g. the configured API key), scrubbed wherever they
   * appear; one that is a URL is a secret whole, its whole path included (urlSecrets.ts).
   */
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>>
  /** Outbound URLs known at start: the parts of them a receiver may echo (urlSecrets.ts). */
  readonly urls?: ReadonlyArray<string>
}

export const makeScrubber = (options: ScrubberOptions = {}): Scrubber => {
  const prefixes = [...new Set([...DEFAULT_KEY_PREFIXES, ...(options.keyPrefixes ?? [])])].filter((p) => p !== "")
  const prefixPattern = new RegExp(
    `(?<![A-Za-z0-9])(${prefixes.map(escapeRegExp).join("|")})[A-Za-z0-9_\\-+/=.]{4,}`,
    "g"
  )
  const secrets = (options.secrets ?? []).map((s) => Redacted.value(s))
  // Longest first, so a secret that contains another is replaced whole.
  const literals = [
    ...new Set([
      ...secrets,
      ...secrets.flatMap((s) => urlSecrets(s, { wholePath: true })),
      ...(options.urls ?? []).flatMap((u) => urlSecrets(u, { wholePath: false }))
    ])
  ]
    .filter((s) => s.length >= MIN_LITERAL_LENGTH)
    .sort((a, b) => b.length - a.length)

  const text = (input: string): string => {
    let out = input
    for (const literal of literals) out = out.split(literal).join(REDACTED)
    return out
      .replace(URL_PATTERN, scrubUrl)
      .replace(CREDENTIAL_PATTERN, (_m, scheme: string) => `${scheme} ${REDACTED}`)
      .replace(FIELD_PATTERN, (_m, key: string, sep: string) => `${key}${sep}${REDACTED}`)
      .replace(prefixPattern, (_m, prefix: string) => `${prefix}${REDACTED}`)
  }

  const value = (input: unknown): unknown => walk(input, text, 0, new WeakSet())

  return { text, value }
}

/** Whether an object key names a secret (normalized: camelCase and kebab-case → snake_case). */
export const isSecretKey = (key: string): boolean => SECRET_KEYS.has(normalizeKey(key))

// ---------------------------------------------------------------------------------------

const DEFAULT_KEY_PREFIXES: ReadonlyArray<string> = ["dls_", "whsec_"]

/** Literal secrets shorter than this are not registered: replacing them would garble text. */
const MIN_LITERAL_LENGTH = 8

const MAX_DEPTH = 8

const SECRET_KEYS: ReadonlySet<string> = new Set([
  "access_token",
  "refresh_token",
  "id_token",
  "device_code",
  "client_secret",
  "code_verifier",
  "api_key",
  "apikey",
  "x_api_key",
  "token",
  "bearer",
  "secret",
  "webhook_secret",
  "password",
  "passwd",
  "authorization",
  "proxy_authorization",
  "cookie",
  "set_cookie"
])

/** Query parameters of the API that carry no secret; any other parameter hides the query. */
const HARMLESS_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  "cursor",
  "limit",
  "page",
  "per_page",
  "flatten",
  "kind",
  "include",
  "include_media",
  "include_poster",
  "updated_after",
  "parent_id",
  "folder_id",
  "sort",
  "order",
  "q"
])

const SECRET_FIELD_NAMES =
  "access_token|refresh_token|id_token|device_code|client_secret|code_verifier|api_key|apikey|x-api-key|token|secret|webhook_secret|password|passwd|authorization|cookie"

/** `name=value`, `name: value`, `"name":"value"` for secret names (value up to a delimiter). */
const FIELD_PATTERN = new RegExp(
  `\\b(${SECRET_FIELD_NAMES})(\\\\?["']?\\s*[:=]\\s*\\\\?["']?)(?!<redacted>|(?:Bearer|Basic)\\s)[^"'&\\s,;}\\]\\\\]+`,
  "gi"
)

const CREDENTIAL_PATTERN = /\b(Bearer|Basic)\s+(?!<redacted>|(?:Bearer|Basic)\b)[A-Za-z0-9._~+/=-]+/gi

const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>`]+/gi

const normalizeKey = (key: string): string =>
  key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/-/g, "_")

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Drops user:password@, the fragment, and the query unless every parameter is harmless. */
const scrubUrl = (url: string): string => {
  let out = url.replace(/^(https?:\/\/)[^/?#@]*@/i, `$1${REDACTED}@`)
  const hash = out.indexOf("#")
  if (hash >= 0) out = `${out.slice(0, hash)}#${REDACTED}`
  const question = out.indexOf("?")
  if (question < 0) return out
  const end = out.indexOf("#", question)
  const query = out.slice(question + 1, end < 0 ? undefined : end)
  const names = query
    .split("&")
    .filter((pair) => pair !== "")
    .map((pair) => safeDecode(pair.split("=")[0] ?? "").toLowerCase())
  if (names.every((name) => HARMLESS_QUERY_PARAMETERS.has(name))) return out
  return `${out.slice(0, question)}?${REDACTED}${end < 0 ? "" : out.slice(end)}`
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const walk = (input: unknown, text: (s: string) => string, depth: number, seen: WeakSet<object>): unknown => {
  if (Predicate.isString(input)) return text(input)
  if (input === null || Predicate.isNumber(input) || Predicate.isBoolean(input) || input === undefined) return input
  if (Predicate.isBigInt(input)) return input.toString()
  if (Predicate.isSymbol(input) || Predicate.isFunction(input)) return String(input)
  if (Redacted.isRedacted(input)) return REDACTED
  if (!Predicate.isObjectOrArray(input)) return text(String(input))
  if (seen.has(input)) return "[Circular]"
  if (depth >= MAX_DEPTH) return "[…]"
  seen.add(input)
  try {
    if (input instanceof Date) return Number.isNaN(input.getTime()) ? "Invalid Date" : input.toISOString()
    if (input instanceof Error) {
      return text(input.message === "" ? input.name : `${input.name}: ${input.message}`)
    }
    if (input instanceof URL) return text(input.href)
    if (Array.isArray(input)) return input.map((v) => walk(v, text, depth + 1, seen))
    if (input instanceof Map) {
      return walkEntries(
        [...input.entries()].map(([k, v]) => [String(k), v]),
        text,
        depth,
        seen
      )
    }
    if (input instanceof Set) return [...input].map((v) => walk(v, text, depth + 1, seen))
    if (Predicate.hasProperty(input, "toJSON") && Predicate.isFunction(input.toJSON)) {
      const json: unknown = input.toJSON()
      return json === input ? "[toJSON]" : walk(json, text, depth + 1, seen)
    }
    return walkEntries(Object.entries(input), text, depth, seen)
  } catch {
    return "[unreadable]"
  } finally {
    seen.delete(input)
  }
}

const walkEntries = (
  entries: ReadonlyArray<readonly [string, unknown]>,
  text: (s: string) => string,
  depth: number,
  seen: WeakSet<object>
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, v] of entries) {
    const value = isSecretKey(key) && v !== null && v !== undefined ? REDACTED : walk(v, text, depth + 1, seen)
    // defineProperty, not assignment: a key named "__proto__" stays a plain key.
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return out
}
