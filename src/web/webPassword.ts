/**
 * The web page's password check, when the page asks for one (`server.listen` beyond
 * loopback): the password of `server.password_file`, or the one `server.password_hash` was
 * made from, or else one generated at the first start:
 *
 *   <state_dir>/web-password holds a hash? ─yes─► it is the password's
 *        └─no─► a random password (GENERATED_BYTES, base64url) is made, its hash written
 *               there (0600, written whole then renamed into place), and the password
 *               printed once on standard output, never logged; delete the file for a new one
 *
 * A check of a hash runs scrypt on the thread pool, one at a time (CHECKS_AT_ONCE): a
 * burst of sign-ins costs one scrypt's memory, not one per request.
 */

import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Console, Effect, Redacted, Semaphore } from "effect"
import type { WebPasswordSetting } from "../config/serverSettings.ts"
import { checkPassword, hashPassword, type PasswordHash, parsePasswordHash } from "../server/passwordHash.ts"
import { sameText } from "../server/signInBans.ts"

/** The file in the state dir that keeps the generated password's hash. */
export const PASSWORD_FILE = "web-password"

const GENERATED_BYTES = 18

const CHECKS_AT_ONCE = 1

/** Whether a candidate is the password. */
export type PasswordCheck = (candidate: string) => Effect.Effect<boolean>

/** The check for `setting`, generating the password in `stateDir` when none is configured. */
export const webPassword = Effect.fnUntraced(function* (setting: WebPasswordSetting | null, stateDir: string) {
  if (setting?._tag === "Plain") {
    const password = setting.password
    const check: PasswordCheck = (candidate) => Effect.sync(() => sameText(candidate, Redacted.value(password)))
    return check
  }
  const hash = setting === null ? yield* storedOrGenerated(stateDir) : yield* parsed(Redacted.value(setting.hash))
  const turns = yield* Semaphore.make(CHECKS_AT_ONCE)
  const check: PasswordCheck = (candidate) => Semaphore.withPermit(turns, checkPassword(hash, candidate))
  return check
})

// ---------------------------------------------------------------------------------------

const storedOrGenerated = Effect.fnUntraced(function* (stateDir: string) {
  const file = Path.join(stateDir, PASSWORD_FILE)
  const stored = yield* Effect.promise(() => Fs.promises.readFile(file, "utf8").catch(() => undefined))
  if (stored !== undefined) {
    const hash = parsePasswordHash(stored)
    if (typeof hash !== "string") return hash
    yield* Effect.logWarning(`${file} holds no password hash (${hash}); a new password is generated`)
  }
  const password = Redacted.make(randomBytes(GENERATED_BYTES).toString("base64url"))
  const text = yield* hashPassword(password)
  yield* Effect.promise(async () => {
    const partial = `${file}.${process.pid}.partial`
    await Fs.promises.writeFile(partial, `${text}\n`, { mode: 0o600 })
    await Fs.promises.rename(partial, file)
  })
  yield* Console.log(`dlsync web page password (shown this once, kept hashed in ${file}): ${Redacted.value(password)}`)
  yield* Effect.logWarning(
    `the web page's password was generated and printed once on standard output; it is kept hashed in ${file} (set server.password_file to choose one)`
  )
  return yield* parsed(text)
})

/** A hash the configuration already checked (config/serverSettings.ts) or one just made: unreadable, a defect. */
const parsed = (text: string): Effect.Effect<PasswordHash> => {
  const hash = parsePasswordHash(text)
  return typeof hash === "string" ? Effect.die(new Error(`unreadable password hash: ${hash}`)) : Effect.succeed(hash)
}
