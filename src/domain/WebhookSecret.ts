/**
 * Webhook signing secrets, as the spec's "Signature" step 1 reads them: the key is the
 * strict base64 decoding of the text after the `whsec_` prefix.
 *
 * Strict means RFC 4648 §4 exactly: the standard alphabet, padding to a multiple of four,
 * and no stray bits in the last character (the text is the canonical encoding of its
 * bytes). Whitespace, the URL-safe alphabet, a missing `=` or an empty key are refused, so
 * a secret that decodes at all decodes to the one key the service signs with.
 */
import { Redacted } from "effect"

export const WEBHOOK_SECRET_PREFIX = "whsec_"

/** What a secret must look like, for messages (never the secret itself). */
export const WEBHOOK_SECRET_EXPECTED = 'a webhook secret: "whsec_" followed by base64'

/** The signing key of a secret text, or undefined when it is not `whsec_` + strict base64 of at least one byte. */
export const webhookKey = (secret: string): Uint8Array | undefined => {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined
  const key = strictBase64(secret.slice(WEBHOOK_SECRET_PREFIX.length))
  return key === undefined || key.length === 0 ? undefined : key
}

/** The keys of the configured secrets (each was checked when the configuration loaded). */
export const webhookKeys = (secrets: ReadonlyArray<Redacted.Redacted<string>>): ReadonlyArray<Uint8Array> =>
  secrets.flatMap((secret) => {
    const key = webhookKey(Redacted.value(secret))
    return key === undefined ? [] : [key]
  })

/** The bytes of canonical, padded, standard-alphabet base64; undefined for anything else. */
export const strictBase64 = (text: string): Uint8Array | undefined => {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined
  const bytes = Buffer.from(text, "base64")
  return bytes.toString("base64") === text ? bytes : undefined
}

// ---------------------------------------------------------------------------------------

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
