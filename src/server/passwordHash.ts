/**
 * Passwords kept as scrypt hashes (`server.password_hash`, the generated password in the
 * state dir), in one text form:
 *
 *   $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt, base64>$<hash, base64>
 *
 * (the form passlib writes, with plain base64). Hashing and checking run on libuv's thread
 * pool (node:crypto's asynchronous scrypt), never on the event loop; a check compares in
 * constant time.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { Effect, Redacted } from "effect"

/** scrypt's cost for new hashes: N = 2^14, r = 8, p = 1 (16 MiB, tens of milliseconds). */
export const SCRYPT_COST = { ln: 14, r: 8, p: 1 } as const

/** A parsed hash: its parameters, salt and derived key. */
export interface PasswordHash {
  readonly ln: number
  readonly r: number
  readonly p: number
  readonly salt: Buffer
  readonly key: Buffer
}

/** The hash of a text, or why it is not one (for the configuration's message). */
export const parsePasswordHash = (text: string): PasswordHash | string => {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/.exec(
    text.trim()
  )
  if (match === null) return "expected $scrypt$ln=<n>,r=<r>,p=<p>$<salt base64>$<hash base64>"
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (ln < 10 || ln > 20 || r < 1 || p < 1 || p > 4) return "scrypt parameters out of range (ln 10–20, r ≥ 1, p 1–4)"
  if (128 * r * 2 ** ln > MAX_MEMORY) return "scrypt parameters need more than 256 MiB"
  const salt = Buffer.from(match[4] ?? "", "base64")
  const key = Buffer.from(match[5] ?? "", "base64")
  if (salt.length < 8 || key.length < 16) return "the salt or the hash is too short"
  return { ln, r, p, salt, key }
}

/** A new hash of `password` in the text form, with a fresh salt. */
export const hashPassword = (password: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.gen(function* () {
    const salt = randomBytes(16)
    const key = yield* derive(password, { ...SCRYPT_COST, salt }, 32)
    return `$scrypt$ln=${SCRYPT_COST.ln},r=${SCRYPT_COST.r},p=${SCRYPT_COST.p}$${salt.toString("base64")}$${key.toString("base64")}`
  })

/** Whether `password` is the one `hash` was made from. */
export const checkPassword = (hash: PasswordHash, password: string): Effect.Effect<boolean> =>
  Effect.map(derive(Redacted.make(password), hash, hash.key.length), (key) => timingSafeEqual(key, hash.key))

// ---------------------------------------------------------------------------------------

const MAX_MEMORY = 256 * 1024 * 1024

const derive = (
  password: Redacted.Redacted<string>,
  params: { readonly ln: number; readonly r: number; readonly p: number; readonly salt: Buffer },
  length: number
): Effect.Effect<Buffer> =>
  Effect.callback<Buffer>((resume) => {
    scrypt(
      Redacted.value(password),
      params.salt,
      length,
      { N: 2 ** params.ln, r: params.r, p: params.p, maxmem: MAX_MEMORY },
      (error, key) => resume(error === null ? Effect.succeed(key) : Effect.die(error))
    )
  })
