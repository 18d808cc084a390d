/**
 * The control API over HTTP, under /_control (only with `--control`): the operations of
 * control.ts with snake_case JSON. No credential; errors use the public envelope (404 for
 * an unknown id, 422 for invalid arguments).
 *
 *   GET    /_control                          users, faults, clock
 *   POST   /_control/users                    → { user_id, api_key, access_token, refresh_token }
 *   POST   /_control/files                    { type: file|folder, name, parent_id?, size_bytes?, mime_type?,
 *                                                kind?, locked?, download_id?, media?: true|{title,hdr,status},
 *                                                poster?: true|{width,height,dominant_color}, expires_at?, user_id? }
 *   GET    /_control/files/:id                the item as GET /files/{file} renders it
 *   POST   /_control/files/:id/edit           { name?, size_bytes?, mime_type?, kind?, locked?, touch_content?, expires_at? }
 *   POST   /_control/files/:id/rename         { name }
 *   POST   /_control/files/:id/move           { parent_id }
 *   POST   /_control/files/:id/lock | unlock
 *   POST   /_control/files/delete             { ids }
 *   POST   /_control/cursors/expire
 *   POST   /_control/clock/advance            { ms }
 *   POST   /_control/account                  { credits_remaining?, plan?, limits?, email_verified?, user_id? }
 *   POST   /_control/cache                    { hashes, cached }
 *   GET    /_control/requests?origin=&after=  DELETE /_control/requests
 *   GET    /_control/faults  POST /_control/faults  DELETE /_control/faults  DELETE /_control/faults/:id
 *          fault: { kind, path, method?, count?, probability?, retry_after_seconds?, after_bytes?, bytes_per_second?,
 *                   delay_ms?, max_delay_ms? }
 *   PUT    /_control/zip                      { method?: stored|deflate, base?: URL|null }
 */
import { parseRfc3339Micros } from "../clock.ts"
import type { EmulatorContext } from "../context.ts"
import type { ControlApi } from "../control.ts"
import { isFaultKind } from "../faults.ts"
import { apiError, ok, type Route, type RouteRequest, type RouteResult, validationFailed } from "../http.ts"
import { type Item, type PosterSpec, TreeError } from "../item.ts"
import { isKind } from "../kinds.ts"
import { sampleMedia } from "../media.ts"
import { renderItem } from "../records.ts"
import type { Limits } from "../state.ts"

const NONE = { kind: "none" } as const

export const controlRoutes = (context: EmulatorContext, control: ControlApi): ReadonlyArray<Route> => {
  const render = (item: Item) => renderItem(item, { media: "full", poster: true, posterBase: context.urls.cdnOrigin })
  const route = (
    method: Route["method"],
    path: string,
    run: (request: RouteRequest, body: Body) => RouteResult
  ): Route => ({
    method,
    path: `/_control${path}`,
    auth: NONE,
    handle: (request) => guarded(() => run(request, parseBody(request)))
  })
  return [
    route("GET", "", () =>
      ok({
        users: [...context.state.users.values()].map((user) => ({
          user_id: user.id,
          api_key: user.apiKey,
          items: user.tree.size
        })),
        client_id: context.state.defaultClientId,
        now_ms: context.state.clock.nowMs(),
        faults: control.faults()
      })
    ),
    route("POST", "/users", (_, body) => {
      const user = control.addUser({ name: body.string("name"), email: body.string("email") })
      return ok(
        {
          user_id: user.userId,
          api_key: user.apiKey,
          access_token: user.accessToken,
          refresh_token: user.refreshToken
        },
        undefined,
        201
      )
    }),
    route("POST", "/files", (_, body) => {
      const type = body.string("type") ?? "file"
      const name = body.string("name") ?? ""
      const userId = body.string("user_id")
      const parentId = body.nullableString("parent_id")
      const locked = body.boolean("locked")
      if (type === "folder") {
        return ok(
          render(
            control.addFolder({
              name,
              userId: userId,
              parentId: parentId,
              locked: locked
            })
          ),
          undefined,
          201
        )
      }
      if (type !== "file") throw new RangeError("type must be file or folder")
      const kind = body.string("kind")
      if (kind !== undefined && !isKind(kind)) throw new RangeError(`unknown kind ${kind}`)
      const sizeBytes = body.number("size_bytes") ?? 0
      const item = control.addFile({
        name,
        sizeBytes,
        userId: userId,
        parentId: parentId,
        locked: locked,
        mimeType: body.string("mime_type"),
        kind: kind !== undefined && isKind(kind) ? kind : undefined,
        downloadId: body.nullableString("download_id"),
        media: mediaOf(body.raw.media, name, sizeBytes),
        poster: posterOf(body.raw.poster),
        expiresAt: body.timestamp("expires_at")
      })
      return ok(render(item), undefined, 201)
    }),
    route("GET", "/files/:id", (request, body) => {
      const item = control.item(request.params.id ?? "", body.queryUser(request))
      return item === undefined ? apiError(404, "not_found", "No such item") : ok(render(item))
    }),
    route("POST", "/files/:id/edit", (request, body) => {
      const kind = body.string("kind")
      if (kind !== undefined && !isKind(kind)) throw new RangeError(`unknown kind ${kind}`)
      const item = control.edit(
        request.params.id ?? "",
        {
          name: body.string("name"),
          sizeBytes: body.number("size_bytes"),
          mimeType: body.string("mime_type"),
          kind: kind !== undefined && isKind(kind) ? kind : undefined,
          locked: body.boolean("locked"),
          touchContent: body.boolean("touch_content"),
          downloadId: body.nullableString("download_id"),
          poster: posterOf(body.raw.poster),
          expiresAt: body.timestamp("expires_at")
        },
        body.string("user_id")
      )
      return ok(render(item))
    }),
    route("POST", "/files/:id/rename", (request, body) =>
      ok(render(control.rename(request.params.id ?? "", body.string("name") ?? "", body.string("user_id"))))
    ),
    route("POST", "/files/:id/move", (request, body) =>
      ok(
        render(control.move(request.params.id ?? "", body.nullableString("parent_id") ?? null, body.string("user_id")))
      )
    ),
    route("POST", "/files/:id/lock", (request, body) =>
      ok(render(control.lock(request.params.id ?? "", body.string("user_id"))))
    ),
    route("POST", "/files/:id/unlock", (request, body) =>
      ok(render(control.unlock(request.params.id ?? "", body.string("user_id"))))
    ),
    route("POST", "/files/delete", (_, body) => {
      const ids = body.raw.ids
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string"))
        throw new RangeError("ids must be an array of strings")
      return ok(control.remove(ids, body.string("user_id")))
    }),
    route("POST", "/cursors/expire", () => {
      control.expireCursors()
      return { kind: "empty", status: 204 }
    }),
    route("POST", "/clock/advance", (_, body) => {
      control.advanceClock(body.number("ms") ?? Number.NaN)
      return ok({ now_ms: context.state.clock.nowMs() })
    }),
    route("POST", "/account", (_, body) => {
      const limits = body.raw.limits
      const plan = body.raw.plan
      const account = control.updateAccount(
        {
          creditsRemaining: body.number("credits_remaining"),
          emailVerified: body.boolean("email_verified"),
          plan: plan === undefined ? undefined : planOf(plan),
          ...(limits === undefined
            ? {}
            : { limits: limitsOf(limits, control.updateAccount({}, body.string("user_id")).limits) })
        },
        body.string("user_id")
      )
      return ok({ credits_remaining: account.creditsRemaining, plan: account.plan, limits: account.limits })
    }),
    route("POST", "/cache", (_, body) => {
      const hashes = body.raw.hashes
      if (!Array.isArray(hashes) || !hashes.every((hash) => typeof hash === "string")) {
        throw new RangeError("hashes must be an array of strings")
      }
      control.setCached(hashes, body.boolean("cached") ?? true)
      return { kind: "empty", status: 204 }
    }),
    route("GET", "/requests", (request) => {
      const origin = request.url.searchParams.get("origin")
      const after = request.url.searchParams.get("after")
      if (origin !== null && origin !== "api" && origin !== "cdn") throw new RangeError("origin must be api or cdn")
      return ok(control.requests({ origin: origin ?? undefined, afterSeq: after === null ? undefined : Number(after) }))
    }),
    route("DELETE", "/requests", () => {
      control.clearRequests()
      return { kind: "empty", status: 204 }
    }),
    route("GET", "/cdn", (request) =>
      ok(control.cdnDownloads({ resetPeak: request.url.searchParams.get("reset_peak") === "true" }))
    ),
    route("PUT", "/cdn/rate-per-connection", (_, body) => {
      const value = body.raw.bytes_per_second
      if (value !== null && typeof value !== "number") throw new RangeError("bytes_per_second must be a number or null")
      control.setCdnRatePerConnection(value)
      return { kind: "empty", status: 204 }
    }),
    route("PUT", "/zip", (_, body) => {
      const method = body.raw.method
      if (method !== undefined && method !== "stored" && method !== "deflate") {
        throw new RangeError("method must be stored or deflate")
      }
      const base = body.raw.base
      if (base !== undefined && base !== null && typeof base !== "string")
        throw new RangeError("base must be a URL or null")
      control.setZip({ method, base })
      return { kind: "empty", status: 204 }
    }),
    route("GET", "/faults", () => ok(control.faults())),
    route("POST", "/faults", (_, body) => {
      const kind = body.raw.kind
      if (!isFaultKind(kind)) throw new RangeError(`unknown fault kind ${String(kind)}`)
      const fault = control.addFault({
        kind,
        path: body.string("path") ?? "",
        method: body.string("method"),
        count: body.number("count"),
        probability: body.number("probability"),
        retryAfterSeconds: body.number("retry_after_seconds"),
        afterBytes: body.number("after_bytes"),
        bytesPerSecond: body.number("bytes_per_second"),
        delayMs: body.number("delay_ms"),
        maxDelayMs: body.number("max_delay_ms")
      })
      return ok(fault, undefined, 201)
    }),
    route("DELETE", "/faults", () => {
      control.clearFaults()
      return { kind: "empty", status: 204 }
    }),
    route("DELETE", "/faults/:id", (request) =>
      control.removeFault(request.params.id ?? "")
        ? { kind: "empty", status: 204 }
        : apiError(404, "not_found", "No such fault")
    )
  ]
}

interface Body {
  readonly raw: Readonly<Record<string, unknown>>
  string(name: string): string | undefined
  nullableString(name: string): string | null | undefined
  number(name: string): number | undefined
  boolean(name: string): boolean | undefined
  /** Microseconds of an RFC 3339 timestamp. */
  timestamp(name: string): number | undefined
  queryUser(request: RouteRequest): string | undefined
}

const parseBody = (request: RouteRequest): Body => {
  let raw: Readonly<Record<string, unknown>> = {}
  if (request.body.length > 0) {
    const value: unknown = JSON.parse(request.body.toString("utf8"))
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new RangeError("body must be a JSON object")
    raw = Object.fromEntries(Object.entries(value))
  }
  const typed = <T>(name: string, guard: (value: unknown) => value is T, what: string): T | undefined => {
    const value = raw[name]
    if (value === undefined) return undefined
    if (!guard(value)) throw new RangeError(`${name} must be ${what}`)
    return value
  }
  return {
    raw,
    string: (name) => typed(name, (v): v is string => typeof v === "string", "a string"),
    nullableString: (name) =>
      typed(name, (v): v is string | null => v === null || typeof v === "string", "a string or null"),
    number: (name) => typed(name, (v): v is number => typeof v === "number" && Number.isFinite(v), "a number"),
    boolean: (name) => typed(name, (v): v is boolean => typeof v === "boolean", "a boolean"),
    timestamp: (name) => {
      const text = typed(name, (v): v is string => typeof v === "string", "an RFC 3339 timestamp")
      if (text === undefined) return undefined
      const micros = parseRfc3339Micros(text)
      if (micros === undefined) throw new RangeError(`${name} must be an RFC 3339 timestamp`)
      return micros
    },
    queryUser: (req) => req.url.searchParams.get("user_id") ?? undefined
  }
}

const guarded = (run: () => RouteResult): RouteResult => {
  try {
    return run()
  } catch (error) {
    if (error instanceof TreeError) {
      return error.reason === "not_found"
        ? apiError(404, "not_found", error.message)
        : validationFailed({ [error.reason]: [error.message] })
    }
    if (error instanceof RangeError || error instanceof SyntaxError) return validationFailed({ body: [error.message] })
    throw error
  }
}

const mediaOf = (value: unknown, name: string, sizeBytes: number) => {
  if (value === undefined || value === false) return undefined
  if (value === null) return null
  const options = typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}
  const status = options.status
  return sampleMedia({
    title: typeof options.title === "string" ? options.title : name,
    seed: sizeBytes,
    sizeBytes,
    hdr: options.hdr === true,
    ...(status === "pending" || status === "ready" || status === "unavailable" ? { status } : {})
  })
}

const posterOf = (value: unknown): PosterSpec | null | undefined => {
  if (value === undefined || value === false) return undefined
  if (value === null) return null
  const options = typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}
  const width = typeof options.width === "number" ? options.width : 640
  if (!(Number.isInteger(width) && width >= 1 && width <= 640)) throw new RangeError("poster width must be 1..640")
  return {
    width,
    height: typeof options.height === "number" ? options.height : Math.round((width * 9) / 16),
    dominantColor: typeof options.dominant_color === "string" ? options.dominant_color : "#2a4d69"
  }
}

const planOf = (value: unknown): { name: string; expires_at: string } | null => {
  if (value === null) return null
  if (typeof value === "object" && "name" in value && "expires_at" in value) {
    const { name, expires_at } = value
    if (typeof name === "string" && typeof expires_at === "string") return { name, expires_at }
  }
  throw new RangeError("plan must be null or { name, expires_at }")
}

const limitsOf = (value: unknown, current: Limits): Limits => {
  if (typeof value !== "object" || value === null) throw new RangeError("limits must be an object")
  const next: Limits = { ...current }
  for (const [key, entry] of Object.entries(value)) {
    switch (key) {
      case "max_file_size_bytes":
      case "concurrent_downloads":
      case "concurrent_torrents":
        if (entry !== null && !(typeof entry === "number" && Number.isInteger(entry) && entry >= 0)) {
          throw new RangeError(`${key} must be a non-negative integer or null`)
        }
        next[key] = entry
        break
      case "daily_downloads":
      case "daily_download_bytes": {
        if (entry === null) {
          next[key] = null
          break
        }
        if (typeof entry !== "object" || !("limit" in entry) || !("remaining" in entry) || !("resets_at" in entry)) {
          throw new RangeError(`${key} must be null or { limit, remaining, resets_at }`)
        }
        const { limit, remaining, resets_at } = entry
        if (typeof limit !== "number" || typeof remaining !== "number" || typeof resets_at !== "string") {
          throw new RangeError(`${key} must be null or { limit, remaining, resets_at }`)
        }
        next[key] = { limit, remaining, resets_at }
        break
      }
      default:
        throw new RangeError(`unknown limit ${key}`)
    }
  }
  return next
}
