import { createHash, randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEVICE_GRANT } from "../../src/emulator/oauth.ts"
import { REDIRECT_URI, WEB_CLIENT_ID } from "../../src/emulator/oauthClients.ts"
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"

let emulator: RunningEmulator

beforeAll(async () => {
  emulator = await startEmulator({ control: true })
})

afterAll(async () => {
  await emulator.close()
})

const post = (path: string, fields: Record<string, string>, contentType = "application/x-www-form-urlencoded") =>
  fetch(`${emulator.authUrl}${path}`, {
    method: "POST",
    headers: { "content-type": contentType, accept: "application/json" },
    body: new URLSearchParams(fields).toString()
  })

const control = (path: string, body: unknown) =>
  fetch(`${emulator.authUrl}/_control${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** The value at a dotted path of parsed JSON ("data.items.0.id"), or undefined. */
const at = (value: unknown, path: string): unknown =>
  path
    .split(".")
    .reduce<unknown>((acc, key) => (typeof acc === "object" && acc !== null ? Reflect.get(acc, key) : undefined), value)

const jsonOf = async (response: Response): Promise<unknown> => response.json()

describe("OAuth over HTTP", () => {
  it("expires access tokens after accessTokenLifetimeSeconds on the emulator clock", async () => {
    const short = await startEmulator({ accessTokenLifetimeSeconds: 2 })
    try {
      const account = () =>
        fetch(`${short.baseUrl}/account`, { headers: { authorization: `Bearer ${short.accessToken}` } })
      expect((await account()).status).toBe(200)
      short.state.clock.advance(2000)
      expect((await account()).status).toBe(401)
    } finally {
      await short.close()
    }
  })

  it("serves discovery metadata on auth_url with the emulator's own origin", async () => {
    const r = await fetch(`${emulator.authUrl}/.well-known/oauth-authorization-server`)
    expect(r.status).toBe(200)
    const m = await jsonOf(r)
    expect(at(m, "issuer")).toBe(emulator.authUrl)
    expect(at(m, "device_authorization_endpoint")).toBe(`${emulator.authUrl}/oauth/device/authorize`)
  })

  it("runs the device flow: authorize, pending, approval through /_control, tokens once", async () => {
    const start = await post("/oauth/device/authorize", { client_id: emulator.clientId })
    expect(start.status).toBe(200)
    expect(start.headers.get("cache-control")).toBe("no-store")
    expect(start.headers.get("pragma")).toBe("no-cache")
    expect(start.headers.get("x-request-id")).toBeTruthy()
    const device = await jsonOf(start)
    const deviceCode = String(at(device, "device_code"))
    const userCode = String(at(device, "user_code"))
    const poll = () =>
      post("/oauth/token", { grant_type: DEVICE_GRANT, client_id: emulator.clientId, device_code: deviceCode })
    emulator.state.clock.advance(5000)
    const pending = await poll()
    expect([pending.status, at(await jsonOf(pending), "error")]).toEqual([400, "authorization_pending"])
    expect((await control("/oauth/device/approve", { user_code: userCode })).status).toBe(204)
    emulator.state.clock.advance(5000)
    const granted = await poll()
    expect(granted.status).toBe(200)
    expect(granted.headers.get("cache-control")).toBe("no-store")
    expect(await jsonOf(granted)).toMatchObject({ token_type: "Bearer", expires_in: 3600 })
    emulator.state.clock.advance(5000)
    expect(at(await jsonOf(await poll()), "error")).toBe("invalid_grant")
    expect((await control("/oauth/device/approve", { user_code: userCode })).status).toBe(404)
  })

  it("makes device-flow tokens work on the API with their scopes, and rotated refresh tokens too", async () => {
    const device = await jsonOf(
      await post("/oauth/device/authorize", { client_id: emulator.clientId, scope: "user:read" })
    )
    await control("/oauth/device/approve", { user_code: String(at(device, "user_code")) })
    const tokens = await jsonOf(
      await post("/oauth/token", {
        grant_type: DEVICE_GRANT,
        client_id: emulator.clientId,
        device_code: String(at(device, "device_code"))
      })
    )
    const get = (path: string, token: string) =>
      fetch(`${emulator.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })
    expect((await get("/account", String(at(tokens, "access_token")))).status).toBe(200)
    const noScope = await get("/files", String(at(tokens, "access_token")))
    expect(noScope.status).toBe(403)
    const rotated = await jsonOf(
      await post("/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: String(at(tokens, "refresh_token")),
        client_id: emulator.clientId
      })
    )
    expect((await get("/account", String(at(rotated, "access_token")))).status).toBe(200)
    expect((await control("/oauth/revoke", { token: String(at(rotated, "refresh_token")) })).status).toBe(200)
    const revoked = await get("/account", String(at(rotated, "access_token")))
    expect(revoked.status).toBe(401)
    expect(revoked.headers.get("www-authenticate")).toContain("invalid_token")
  })

  it("serves the verification page: the user code from verification_uri_complete, approve by form", async () => {
    const device = await jsonOf(await post("/oauth/device/authorize", { client_id: emulator.clientId }))
    const userCode = String(at(device, "user_code"))
    const page = await fetch(String(at(device, "verification_uri_complete")))
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await page.text()).toContain(`value="${userCode}"`)
    const wrong = await post("/device", { user_code: "AAAA-AAAA", action: "approve" })
    expect(wrong.status).toBe(404)
    const approve = await post("/device", { user_code: userCode, action: "approve" })
    expect(approve.status).toBe(200)
    const poll = await post("/oauth/token", {
      grant_type: DEVICE_GRANT,
      client_id: emulator.clientId,
      device_code: String(at(device, "device_code"))
    })
    expect(poll.status).toBe(200)
  })

  it("answers 401 invalid_client with WWW-Authenticate, and 400 for a JSON body", async () => {
    const r = await post("/oauth/device/authorize", { client_id: WEB_CLIENT_ID })
    expect(r.status).toBe(401)
    expect(r.headers.get("www-authenticate")).toMatch(/^Basic /)
    expect(at(await jsonOf(r), "error")).toBe("invalid_client")
    const json = await post("/oauth/token", { grant_type: "refresh_token" }, "application/json")
    expect([json.status, at(await jsonOf(json), "error")]).toEqual([400, "invalid_request"])
  })

  it("redirects GET /oauth/authorize back with a code that the token endpoint exchanges with PKCE", async () => {
    const verifier = randomBytes(40).toString("base64url")
    const query = new URLSearchParams({
      response_type: "code",
      client_id: WEB_CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      state: "xyz",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      scope: "files:read"
    })
    const r = await fetch(`${emulator.authUrl}/oauth/authorize?${query}`, { redirect: "manual" })
    expect(r.status).toBe(302)
    const location = new URL(r.headers.get("location") ?? "")
    expect(location.searchParams.get("state")).toBe("xyz")
    const exchange = await post("/oauth/token", {
      grant_type: "authorization_code",
      code: location.searchParams.get("code") ?? "",
      code_verifier: verifier,
      client_id: WEB_CLIENT_ID,
      redirect_uri: REDIRECT_URI
    })
    expect(exchange.status).toBe(200)
    expect(at(await jsonOf(exchange), "scope")).toBe("files:read")
  })

  it("rotates refresh tokens over HTTP", async () => {
    const start = await control("/oauth/tokens", {
      user_id: emulator.state.primaryUser.id,
      client_id: WEB_CLIENT_ID,
      scopes: ["files:read"]
    })
    const pair = await jsonOf(start)
    const refresh = (token: string) =>
      post("/oauth/token", { grant_type: "refresh_token", refresh_token: token, client_id: WEB_CLIENT_ID })
    const next = await refresh(String(at(pair, "refresh_token")))
    expect(next.status).toBe(200)
    const replay = await refresh(String(at(pair, "refresh_token")))
    expect([replay.status, at(await jsonOf(replay), "error")]).toEqual([400, "invalid_grant"])
  })
})
