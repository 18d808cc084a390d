/** Shared fixtures for auth tests: an emulator, a temp state dir, layers, and seeded token files. */
export { FAST_SETTINGS, oauthClientLayer, oauthLayer, transportLayer, type Urls } from "./layers.ts"

import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Redacted } from "effect"
import { makeTokenStore, type StoredTokens } from "../../../src/auth/TokenStore.ts"
import { authStateArea } from "../../../src/emulator/oauthArea.ts"
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../../src/emulator/server.ts"

/** An emulator closed with the scope. */
export const useEmulator = (options: EmulatorOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startEmulator({ library: "empty", control: true, ...options })),
    (e) => Effect.promise(() => e.close())
  )

/** A fresh state dir removed with the scope. */
export const useStateDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-auth-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** Writes a token file for the emulator's ready pair (or `overrides`). */
export const seedTokens = (
  e: RunningEmulator,
  stateDir: string,
  overrides: Partial<StoredTokens> = {},
  nowMs: number = Date.now()
): Effect.Effect<StoredTokens> => {
  const tokens: StoredTokens = {
    accessToken: Redacted.make(e.accessToken),
    refreshToken: Redacted.make(e.refreshToken),
    expiresAtMs: nowMs + 3_600_000,
    lifetimeSeconds: 3600,
    obtainedAtMs: nowMs,
    authUrl: e.authUrl,
    clientId: e.clientId,
    scopes: ["user:read", "files:read", "storage:read", "storage:write"],
    ...overrides
  }
  return makeTokenStore(stateDir).write(tokens).pipe(Effect.orDie, Effect.as(tokens))
}

/** A new sign-in, as `dlsync login` leaves it: a freshly issued pair in the state dir. */
export const seedFreshLogin = (e: RunningEmulator, stateDir: string): Effect.Effect<StoredTokens> => {
  const fresh = authStateArea(e.context).oauth.issueTokens(e.state.primaryUser.id, e.clientId, [
    "user:read",
    "files:read",
    "storage:read",
    "storage:write"
  ])
  return seedTokens(e, stateDir, {
    accessToken: Redacted.make(fresh.access_token),
    refreshToken: Redacted.make(fresh.refresh_token)
  })
}

/** The stored pair, or undefined. */
export const readTokens = (stateDir: string) =>
  makeTokenStore(stateDir).read.pipe(
    Effect.orDie,
    Effect.map((o) => (o._tag === "Some" ? o.value : undefined))
  )

/** Requests the emulator saw for `method path` (path without query). */
export const countRequests = (e: RunningEmulator, method: string, path: string): number =>
  e.control.requests().filter((r) => r.method === method && r.path.split("?")[0] === path).length
