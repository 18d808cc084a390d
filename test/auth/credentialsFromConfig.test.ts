/** Choosing the credential: OAuth tokens, else the API key (app state off), else "not signed in". */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttp, ApiObserver } from "../../src/api/ApiHttp.ts"
import { FileId } from "../../src/api/schemas/common.ts"
import { isLoginRequired } from "../../src/auth/AuthError.ts"
import { API_KEY_NOTICE, credentialsFromConfig } from "../../src/auth/credentialsFromConfig.ts"
import { AuthStatus } from "../../src/auth/OAuthCredentials.ts"
import { signIn } from "../../src/auth/signIn.ts"
import { makeTokenStore, TOKEN_FILE, TokenStore } from "../../src/auth/TokenStore.ts"
import { type AppConfig, loadConfig } from "../../src/config/loadConfig.ts"
import { authStateArea } from "../../src/emulator/oauthArea.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { countRequests, oauthLayer, seedTokens, transportLayer, useEmulator, useStateDir } from "./support/fixtures.ts"

/** The configuration as loadConfig builds it from DLSYNC_* variables alone. */
const loadTestConfig = (e: RunningEmulator, stateDir: string, apiKey?: string) =>
  loadConfig({
    path: Option.none(),
    env: {
      HOME: stateDir,
      XDG_CONFIG_HOME: Path.join(stateDir, "no-config"),
      DLSYNC_SERVICE_BASE_URL: e.baseUrl,
      DLSYNC_SERVICE_CLIENT_ID: e.clientId,
      DLSYNC_MIRROR_ROOT: Path.join(stateDir, "mirror"),
      DLSYNC_MIRROR_STATE_DIR: stateDir,
      ...(apiKey === undefined ? {} : { DLSYNC_SERVICE_API_KEY: apiKey })
    },
    cwd: stateDir
  }).pipe(Effect.provide(NodeServices.layer), Effect.orDie)

/** An ApiClient on whatever credentialsFromConfig picks, plus its AuthStatus. */
const clientFor = (e: RunningEmulator, c: AppConfig) =>
  ApiClient.layer.pipe(
    Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
    Layer.provideMerge(credentialsFromConfig(c).pipe(Layer.provide(oauthLayer(e)))),
    Layer.provideMerge(transportLayer(e))
  )

describe("credentialsFromConfig", () => {
  it.live("prefers stored OAuth tokens: app state is on", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      yield* seedTokens(e, dir)
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 10 })
      yield* Effect.gen(function* () {
        const status = yield* AuthStatus
        assert.strictEqual(status.mode, "oauth")
        assert.isTrue(status.appStateAvailable)
        const client = yield* ApiClient
        assert.isNull(yield* client.state.get(fileId(file.id)))
      }).pipe(Effect.provide(clientFor(e, yield* loadTestConfig(e, dir, e.apiKey)), { local: true }))
    })
  )

  it.live("falls back to the API key with app state off (the service refuses keys there)", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 10 })
      yield* Effect.gen(function* () {
        const status = yield* AuthStatus
        assert.strictEqual(status.mode, "apiKey")
        assert.isFalse(status.appStateAvailable)
        assert.isTrue(Option.isNone(yield* status.loginRequired))
        const client = yield* ApiClient
        assert.strictEqual((yield* client.account.get).id, e.state.primaryUser.id)
        const refused = yield* Effect.flip(client.state.get(fileId(file.id)))
        assert.strictEqual(refused.reason._tag, "Forbidden")
      }).pipe(Effect.provide(clientFor(e, yield* loadTestConfig(e, dir, e.apiKey)), { local: true }))
      assert.include(API_KEY_NOTICE, "off")
    })
  )

  it.live("without tokens or a key: LoginRequired (not signed in)", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const error = yield* Effect.flip(Layer.build(clientFor(e, yield* loadTestConfig(e, dir))).pipe(Effect.scoped))
      assert.strictEqual(error._tag, "LoginRequired")
      if (error._tag === "LoginRequired") assert.strictEqual(error.reason, "not_signed_in")
    })
  )

  it.live("waitForLogin (the daemon): calls fail with login_required until `dlsync login` stores tokens", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const config = yield* loadTestConfig(e, dir)
      const layer = ApiClient.layer.pipe(
        Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
        Layer.provideMerge(credentialsFromConfig(config, { waitForLogin: true }).pipe(Layer.provide(oauthLayer(e)))),
        Layer.provideMerge(transportLayer(e))
      )
      yield* Effect.gen(function* () {
        const client = yield* ApiClient
        const refused = yield* Effect.flip(client.account.get)
        assert.isTrue(isLoginRequired(refused))
        assert.strictEqual(countRequests(e, "GET", "/api/v1/account"), 0)
        yield* seedTokens(e, dir)
        assert.strictEqual((yield* client.account.get).id, e.state.primaryUser.id)
      }).pipe(Effect.provide(layer, { local: true }))
    })
  )

  it.live("tokens of another service and no key: LoginRequired naming the service", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      yield* seedTokens(e, dir, { authUrl: "https://other.example" })
      const error = yield* Effect.flip(Layer.build(clientFor(e, yield* loadTestConfig(e, dir))).pipe(Effect.scoped))
      assert.strictEqual(error._tag, "LoginRequired")
      if (error._tag === "LoginRequired") {
        assert.strictEqual(error.reason, "other_service")
        assert.include(error.message, "https://other.example")
      }
    })
  )
})

describe("signIn", () => {
  it.live("stores the approved pair (0600) and reads the account with it; logout forgets it", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const oauth = authStateArea(e.context).oauth
      const result = yield* signIn({
        clientId: e.clientId,
        scopes: ["user:read", "files:read"],
        prompt: (authorization) => Effect.sync(() => oauth.approveDevice(authorization.user_code)),
        sleep: (duration) => Effect.sync(() => e.control.advanceClock(Duration.toMillis(duration)))
      }).pipe(Effect.provide(Layer.mergeAll(oauthLayer(e), TokenStore.layer(dir)), { local: true }))
      assert.strictEqual(result.account.id, e.state.primaryUser.id)
      assert.strictEqual(result.path, Path.join(dir, TOKEN_FILE))
      assert.strictEqual((Fs.statSync(result.path).mode & 0o777).toString(8), "600")
      const stored = Option.getOrThrow(yield* makeTokenStore(dir).read)
      assert.strictEqual(stored.authUrl, e.authUrl)
      assert.deepStrictEqual(stored.scopes, ["user:read", "files:read"])
      assert.isTrue(yield* makeTokenStore(dir).clear)
      assert.isFalse(Fs.existsSync(result.path))
    })
  )
})

const fileId = Schema.decodeSync(FileId)
