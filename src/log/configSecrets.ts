/**
 * What the Scrubber is told of a loaded configuration: every secret in it, found by its
 * type (every secret of the configuration is `Redacted`, so a new one is registered without
 * being listed here), and every outbound URL (the strings under a key named `url` or ending
 * in `_url`), whose echoable parts urlSecrets.ts picks. A `Redacted` URL (a `[[notify]]`
 * target) is a secret whole: its whole path is registered too.
 *
 * Generic over the configuration's shape: log/ sits below config/ and knows no section.
 */
import { Predicate, Redacted } from "effect"
import type { ScrubberOptions } from "./Scrubber.ts"

export const configSecrets = (config: unknown): Required<Pick<ScrubberOptions, "secrets" | "urls">> => {
  const secrets: Array<Redacted.Redacted<string>> = []
  const urls: Array<string> = []
  const walk = (value: unknown, key: string, depth: number): void => {
    if (depth > MAX_DEPTH) return
    if (Redacted.isRedacted(value)) {
      const inner: unknown = Redacted.value(value)
      if (Predicate.isString(inner)) secrets.push(Redacted.make(inner))
      return
    }
    if (Predicate.isString(value)) {
      if (URL_KEY.test(key)) urls.push(value)
      return
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key, depth + 1)
      return
    }
    if (Predicate.isObject(value)) for (const [k, v] of Object.entries(value)) walk(v, k, depth + 1)
  }
  walk(config, "", 0)
  return { secrets, urls }
}

const URL_KEY = /(^|_)url$/

/** The configuration is a few levels deep; a cycle cannot run away. */
const MAX_DEPTH = 10
