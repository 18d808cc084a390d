import { createHash, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import type { RouteResult } from "../../src/emulator/http.ts"
import { DEVICE_GRANT, OAuthServer, USER_CODE_PATTERN } from "../../src/emulator/oauth.ts"
import {
  CONFIDENTIAL_CLIENT_ID,
  CONFIDENTIAL_CLIENT_SECRET,
  DEVICE_CLIENT_ID,
  DISABLED_CLIENT_ID,
  REDIRECT_URI,
  WEB_CLIENT_ID
} from "../../src/emulator/oauthClients.ts"
import { parseForm } from "../../src/emulator/routes/oauth.ts"

const AUTH_URL = "http://127.0.0.1:4000"

const setup = (options: { readonly accessTokenLifetimeSeconds?: number } = {}) => {
  let t = 1_800_000_000_000
  const oauth = new OAuthServer({ authUrl: () => AUTH_URL, now: () => t, defaultUserId: "usr_1", ...options })
  return {
    oauth,
    advance: (seconds: number) => {
      t += seconds * 1000
    }
  }
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields)

const json = (result: RouteResult) => {
  if (result.kind !== "json") throw new Error(`expected a JSON result, got ${result.kind}`)
  return { status: result.status, body: asRecord(result.body), headers: result.headers ?? {} }
}

const asRecord = (value: unknown): Record<string, unknown> => {
  if (typeof value !== "object" || value === null) throw new Error("expected an object")
  return Object.fromEntries(Object.entries(value))
}

const str = (value: unknown): string => {
  if (typeof value !== "string") throw new Error(`expected a string, got ${typeof value}`)
  return value
}

const startDevice = (oauth: OAuthServer, clientId = DEVICE_CLIENT_ID) => {
  const r = json(oauth.deviceAuthorize(form({ client_id: clientId })))
  expect(r.status).toBe(200)
  return { deviceCode: str(r.body.device_code), userCode: str(r.body.user_code) }
}

const poll = (oauth: OAuthServer, deviceCode: string, clientId = DEVICE_CLIENT_ID) =>
  json(oauth.token(form({ grant_type: DEVICE_GRANT, client_id: clientId, device_code: deviceCode })))

const pkce = () => {
  const verifier = randomBytes(48).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

const authorizeCode = (oauth: OAuthServer, clientId: string, challenge: string, state = "st-1") => {
  const result = oauth.authorize(
    new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
      scope: "files:read storage:read"
    })
  )
  if (result.kind !== "empty") throw new Error("expected a redirect")
  expect(result.status).toBe(302)
  const location = new URL(result.headers?.location ?? "")
  expect(location.searchParams.get("state")).toBe(state)
  return str(location.searchParams.get("code"))
}

describe("OAuth discovery", () => {
  it("serves RFC 8414 metadata with the three grants and S256 only", () => {
    const { oauth } = setup()
    const m = oauth.metadata()
    expect(m.issuer).toBe(AUTH_URL)
    expect(m.token_endpoint).toBe(`${AUTH_URL}/oauth/token`)
    expect(m.device_authorization_endpoint).toBe(`${AUTH_URL}/oauth/device/authorize`)
    expect(m.authorization_endpoint).toBe(`${AUTH_URL}/oauth/authorize`)
    expect(m.grant_types_supported).toEqual(["authorization_code", "refresh_token", DEVICE_GRANT])
    expect(m.code_challenge_methods_supported).toEqual(["S256"])
    expect(m.scopes_supported).toContain("storage:write")
    expect(m.token_endpoint_auth_methods_supported).toContain("client_secret_post")
  })
})

describe("POST /oauth/device/authorize", () => {
  it("answers device_code, a user_code of the spec's pattern, expires_in 600 and interval 5, not cacheable", () => {
    const { oauth } = setup()
    const r = json(oauth.deviceAuthorize(form({ client_id: DEVICE_CLIENT_ID })))
    expect(r.status).toBe(200)
    expect(str(r.body.user_code)).toMatch(USER_CODE_PATTERN)
    expect(r.body.expires_in).toBe(600)
    expect(r.body.interval).toBe(5)
    expect(r.body.verification_uri).toBe(`${AUTH_URL}/device`)
    expect(str(r.body.verification_uri_complete)).toContain(str(r.body.user_code))
    expect(r.headers["cache-control"]).toBe("no-store")
    expect(r.headers.pragma).toBe("no-cache")
  })

  it("rejects a missing or malformed client_id with 400 invalid_request", () => {
    const { oauth } = setup()
    expect(json(oauth.deviceAuthorize(form({}))).body.error).toBe("invalid_request")
    const r = json(oauth.deviceAuthorize(form({ client_id: "not-a-uuid" })))
    expect([r.status, r.body.error]).toEqual([400, "invalid_request"])
  })

  it.each([
    ["unknown", "11111111-2222-4333-8444-555555555555"],
    ["confidential", CONFIDENTIAL_CLIENT_ID],
    ["without Device Flow", WEB_CLIENT_ID],
    ["disabled", DISABLED_CLIENT_ID]
  ])("rejects a client that is %s with 401 invalid_client and WWW-Authenticate", (_, clientId) => {
    const { oauth } = setup()
    const r = json(oauth.deviceAuthorize(form({ client_id: clientId })))
    expect([r.status, r.body.error]).toEqual([401, "invalid_client"])
    expect(r.headers["www-authenticate"]).toMatch(/^Basic realm=/)
  })

  it("allows 30 requests per minute per client, then 429 with Retry-After until the window frees", () => {
    const { oauth, advance } = setup()
    for (let i = 0; i < 30; i++) {
      expect(json(oauth.deviceAuthorize(form({ client_id: DEVICE_CLIENT_ID }))).status).toBe(200)
      advance(1)
    }
    const limited = json(oauth.deviceAuthorize(form({ client_id: DEVICE_CLIENT_ID })))
    expect(limited.status).toBe(429)
    // the first request was at t=0 and we are at t=30 s: it leaves the window 30 s from now
    expect(limited.headers["retry-after"]).toBe("30")
    advance(30)
    expect(json(oauth.deviceAuthorize(form({ client_id: DEVICE_CLIENT_ID }))).status).toBe(200)
  })
})

describe("device polling (the spec's table)", () => {
  it("row 'waiting for user approval': 400 authorization_pending at the interval", () => {
    const { oauth, advance } = setup()
    const { deviceCode } = startDevice(oauth)
    advance(5)
    const r = poll(oauth, deviceCode)
    expect([r.status, r.body.error]).toEqual([400, "authorization_pending"])
    expect(r.headers["cache-control"]).toBe("no-store")
    advance(5)
    expect(poll(oauth, deviceCode).body.error).toBe("authorization_pending")
  })

  it("row 'polling too fast': 400 slow_down, and the interval grows by 5 s for all later polls", () => {
    const { oauth, advance } = setup()
    const { deviceCode } = startDevice(oauth)
    expect(poll(oauth, deviceCode).body.error).toBe("authorization_pending") // the first poll is never too fast
    advance(4)
    expect(poll(oauth, deviceCode).body.error).toBe("slow_down") // interval now 10 s
    advance(5)
    expect(poll(oauth, deviceCode).body.error).toBe("slow_down") // 5 s < 10 s; interval now 15 s
    advance(14)
    expect(poll(oauth, deviceCode).body.error).toBe("slow_down") // 14 s < 15 s; interval now 20 s
    advance(20)
    expect(poll(oauth, deviceCode).body.error).toBe("authorization_pending")
    advance(19)
    expect(poll(oauth, deviceCode).body.error).toBe("slow_down") // it stays grown
  })

  it("row 'user refused': 400 access_denied", () => {
    const { oauth, advance } = setup()
    const { deviceCode, userCode } = startDevice(oauth)
    expect(oauth.denyDevice(userCode)).toBe(true)
    advance(5)
    const r = poll(oauth, deviceCode)
    expect([r.status, r.body.error]).toEqual([400, "access_denied"])
  })

  it("row 'code expired': 400 expired_token once 600 s have passed, even if approved late", () => {
    const { oauth, advance } = setup()
    const { deviceCode, userCode } = startDevice(oauth)
    advance(599)
    expect(poll(oauth, deviceCode).body.error).toBe("authorization_pending")
    advance(1)
    expect(oauth.approveDevice(userCode)).toBe(false)
    const r = poll(oauth, deviceCode)
    expect([r.status, r.body.error]).toEqual([400, "expired_token"])
  })

  it("row 'approved': 200 token response once; a device code issues tokens once", () => {
    const { oauth, advance } = setup()
    const { deviceCode, userCode } = startDevice(oauth)
    expect(oauth.approveDevice(userCode.toLowerCase(), "usr_9")).toBe(true)
    advance(5)
    const r = poll(oauth, deviceCode)
    expect(r.status).toBe(200)
    expect(r.body.token_type).toBe("Bearer")
    expect(r.body.expires_in).toBe(3600)
    expect(r.headers).toMatchObject({ "cache-control": "no-store", pragma: "no-cache" })
    const principal = oauth.resolveAccessToken(str(r.body.access_token))
    expect(principal).toMatchObject({ kind: "oauth", userId: "usr_9", clientId: DEVICE_CLIENT_ID })
    advance(5)
    const again = poll(oauth, deviceCode)
    expect([again.status, again.body.error]).toEqual([400, "invalid_grant"])
  })

  it("answers invalid_grant for an unknown device code or one of another client", () => {
    const { oauth, advance } = setup()
    advance(5)
    expect(poll(oauth, "dc_nope").body.error).toBe("invalid_grant")
    const missing = json(oauth.token(form({ grant_type: DEVICE_GRANT, client_id: DEVICE_CLIENT_ID })))
    expect([missing.status, missing.body.error]).toEqual([400, "invalid_request"])
    const wrongClient = poll(oauth, startDevice(oauth).deviceCode, WEB_CLIENT_ID)
    expect([wrongClient.status, wrongClient.body.error]).toEqual([401, "invalid_client"])
  })
})

describe("authorization_code grant with PKCE S256", () => {
  it("exchanges a code once with the matching verifier and the exact redirect_uri", () => {
    const { oauth } = setup()
    const { verifier, challenge } = pkce()
    const code = authorizeCode(oauth, WEB_CLIENT_ID, challenge)
    const exchange = () =>
      json(
        oauth.token(
          form({
            grant_type: "authorization_code",
            code,
            code_verifier: verifier,
            client_id: WEB_CLIENT_ID,
            redirect_uri: REDIRECT_URI
          })
        )
      )
    const r = exchange()
    expect(r.status).toBe(200)
    expect(r.body.scope).toBe("files:read storage:read")
    expect(oauth.resolveAccessToken(str(r.body.access_token))?.kind).toBe("oauth")
    const reused = exchange()
    expect([reused.status, reused.body.error]).toEqual([400, "invalid_grant"])
  })

  it("refuses a wrong verifier, a differing redirect_uri and a malformed verifier", () => {
    const { oauth } = setup()
    const { verifier, challenge } = pkce()
    const code = authorizeCode(oauth, WEB_CLIENT_ID, challenge)
    const base = { grant_type: "authorization_code", code, client_id: WEB_CLIENT_ID, redirect_uri: REDIRECT_URI }
    const wrong = json(oauth.token(form({ ...base, code_verifier: pkce().verifier })))
    expect([wrong.status, wrong.body.error]).toEqual([400, "invalid_grant"])
    const redirect = json(oauth.token(form({ ...base, code_verifier: verifier, redirect_uri: `${REDIRECT_URI}/` })))
    expect(redirect.body.error).toBe("invalid_grant")
    const short = json(oauth.token(form({ ...base, code_verifier: "a".repeat(42) })))
    expect([short.status, short.body.error]).toEqual([400, "invalid_request"])
    const badChars = json(oauth.token(form({ ...base, code_verifier: `${"a".repeat(42)}+` })))
    expect(badChars.body.error).toBe("invalid_request")
    // the failures above did not consume the code
    expect(json(oauth.token(form({ ...base, code_verifier: verifier }))).status).toBe(200)
  })

  it("makes a confidential client authenticate with client_secret (401 invalid_client otherwise)", () => {
    const { oauth } = setup()
    const { verifier, challenge } = pkce()
    const code = authorizeCode(oauth, CONFIDENTIAL_CLIENT_ID, challenge)
    const base = {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      client_id: CONFIDENTIAL_CLIENT_ID,
      redirect_uri: REDIRECT_URI
    }
    const missing = json(oauth.token(form(base)))
    expect([missing.status, missing.body.error]).toEqual([401, "invalid_client"])
    expect(missing.headers["www-authenticate"]).toBeDefined()
    expect(json(oauth.token(form({ ...base, client_secret: "nope" }))).status).toBe(401)
    expect(json(oauth.token(form({ ...base, client_secret: CONFIDENTIAL_CLIENT_SECRET }))).status).toBe(200)
  })

  it("authorize refuses an unregistered redirect_uri directly and redirects other errors back", () => {
    const { oauth } = setup()
    const bad = json(
      oauth.authorize(
        new URLSearchParams({ response_type: "code", client_id: WEB_CLIENT_ID, redirect_uri: "http://x/" })
      )
    )
    expect([bad.status, bad.body.error]).toEqual([400, "invalid_request"])
    const plain = oauth.authorize(
      new URLSearchParams({
        response_type: "code",
        client_id: WEB_CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        state: "s",
        code_challenge: pkce().challenge,
        code_challenge_method: "plain"
      })
    )
    if (plain.kind !== "empty") throw new Error("expected a redirect")
    const location = new URL(plain.headers?.location ?? "")
    expect(location.searchParams.get("error")).toBe("invalid_request")
    expect(location.searchParams.get("code")).toBeNull()
  })
})

describe("refresh_token grant", () => {
  it("rotates: the old refresh token is dead after use, the new one works", () => {
    const { oauth } = setup()
    const first = oauth.issueTokens("usr_1", DEVICE_CLIENT_ID, ["files:read"])
    const refresh = (token: string) =>
      json(oauth.token(form({ grant_type: "refresh_token", refresh_token: token, client_id: DEVICE_CLIENT_ID })))
    const second = refresh(first.refresh_token)
    expect(second.status).toBe(200)
    expect(second.body.refresh_token).not.toBe(first.refresh_token)
    const replay = refresh(first.refresh_token)
    expect([replay.status, replay.body.error]).toEqual([400, "invalid_grant"])
    const anonymous = json(oauth.token(form({ grant_type: "refresh_token", refresh_token: first.refresh_token })))
    expect([anonymous.status, anonymous.body.error]).toEqual([400, "invalid_grant"])
    expect(refresh(str(second.body.refresh_token)).status).toBe(200)
    expect(oauth.resolveAccessToken(str(second.body.access_token))).toEqual({
      kind: "oauth",
      userId: "usr_1",
      clientId: DEVICE_CLIENT_ID,
      scopes: new Set(["files:read"])
    })
  })

  it("answers 401 invalid_request with a message for a refresh token of another client", () => {
    const { oauth } = setup()
    const pair = oauth.issueTokens("usr_1", DEVICE_CLIENT_ID, ["files:read"])
    const r = json(
      oauth.token(form({ grant_type: "refresh_token", refresh_token: pair.refresh_token, client_id: WEB_CLIENT_ID }))
    )
    expect([r.status, r.body.error]).toEqual([401, "invalid_request"])
    expect(typeof r.body.message).toBe("string")
    expect(r.headers["www-authenticate"]).toBeDefined()
    // the failed attempt did not consume the token
    const own = oauth.token(
      form({ grant_type: "refresh_token", refresh_token: pair.refresh_token, client_id: DEVICE_CLIENT_ID })
    )
    expect(json(own).status).toBe(200)
  })

  it("narrows scope on request and refuses widening it", () => {
    const { oauth } = setup()
    const pair = oauth.issueTokens("usr_1", DEVICE_CLIENT_ID, ["files:read", "storage:read"])
    const wide = json(
      oauth.token(form({ grant_type: "refresh_token", refresh_token: pair.refresh_token, scope: "user:read" }))
    )
    expect([wide.status, wide.body.error]).toEqual([400, "invalid_request"])
    const narrow = json(
      oauth.token(form({ grant_type: "refresh_token", refresh_token: pair.refresh_token, scope: "files:read" }))
    )
    expect(narrow.body.scope).toBe("files:read")
  })
})

describe("token endpoint errors", () => {
  it("answers unsupported_grant_type with a hint, and invalid_request for missing fields", () => {
    const { oauth } = setup()
    const r = json(oauth.token(form({ grant_type: "password" })))
    expect([r.status, r.body.error]).toEqual([400, "unsupported_grant_type"])
    expect(str(r.body.hint)).toContain("refresh_token")
    expect(json(oauth.token(form({}))).body.error).toBe("invalid_request")
    expect(json(oauth.token(form({ grant_type: "refresh_token" }))).body.error).toBe("invalid_request")
    expect(json(oauth.token(form({ grant_type: "authorization_code", code: "x" }))).body.error).toBe("invalid_request")
  })

  it("takes only form-encoded bodies with each parameter once", () => {
    const body = Buffer.from("grant_type=refresh_token&refresh_token=a")
    expect(parseForm({ headers: { "content-type": "application/json" }, body })).toMatch(/Content-Type/)
    expect(
      parseForm({ headers: { "content-type": "application/x-www-form-urlencoded" }, body: Buffer.from("a=1&a=2") })
    ).toMatch(/repeated/)
    const ok = parseForm({ headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" }, body })
    expect(ok instanceof URLSearchParams && ok.get("refresh_token")).toBe("a")
  })
})

describe("access tokens", () => {
  it("expire after the configured lifetime", () => {
    const { oauth, advance } = setup({ accessTokenLifetimeSeconds: 2 })
    const pair = oauth.issueTokens("usr_1", DEVICE_CLIENT_ID, ["files:read"])
    expect(pair.expires_in).toBe(2)
    advance(1.999)
    expect(oauth.resolveAccessToken(pair.access_token)).toBeDefined()
    advance(0.001)
    expect(oauth.resolveAccessToken(pair.access_token)).toBeUndefined()
  })

  it("die with their grant on revocation, by token or by user", () => {
    const { oauth } = setup()
    const a = oauth.issueTokens("usr_1", DEVICE_CLIENT_ID, ["files:read"])
    expect(oauth.revoke(a.refresh_token)).toBe(true)
    expect(oauth.resolveAccessToken(a.access_token)).toBeUndefined()
    const b = oauth.issueTokens("usr_1", DEVICE_CLIENT_ID, [])
    const c = oauth.issueTokens("usr_1", WEB_CLIENT_ID, [])
    expect(oauth.revokeAll("usr_1", DEVICE_CLIENT_ID)).toBe(1)
    expect(oauth.resolveAccessToken(b.access_token)).toBeUndefined()
    expect(oauth.resolveAccessToken(c.access_token)).toBeDefined()
  })
})
