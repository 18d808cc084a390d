/**
 * One request through either origin (API or CDN), from the socket to the response:
 *
 *   request ─► X-Request-ID ─► request log ─► route match ─► latency ─► (404 / 405) ─► fault (status_*)
 *     ─► body (8 MiB cap → 413) ─► bearer → Principal ─► AuthRule (401 / 403) ─► handler
 *     ─► render (JSON envelope, 204/304 without body, body faults)
 *
 * Faults apply to every route except the control API, which stays reliable so that tests
 * can always clear them. Items past their expires_at are swept before each request
 * (state.ts). A handler that throws gets a 500 (or a dropped connection once the headers
 * are out) and its stack on stderr.
 */
import { randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { authorize } from "./authorize.ts"
import type { EmulatorContext } from "./context.ts"
import { apiError, type RouteRequest } from "./http.ts"
import { render, statusFault } from "./render.ts"
import type { Origin } from "./requestLog.ts"
import type { Router } from "./router.ts"

/** Largest request body any route accepts; more is 413. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024

/** The X-Request-ID a response carries: the client's when it is 1..100 visible characters. */
export const responseRequestId = (incoming: string | ReadonlyArray<string> | undefined): string => {
  if (typeof incoming === "string" && /^[\x21-\x7e]{1,100}$/.test(incoming)) return incoming
  return `req_${randomBytes(12).toString("hex")}`
}

export const handleRequest = async (
  context: EmulatorContext,
  router: Router,
  origin: Origin,
  req: IncomingMessage,
  res: ServerResponse
): Promise<void> => {
  const requestId = responseRequestId(req.headers["x-request-id"])
  res.setHeader("X-Request-ID", requestId)
  const method = req.method ?? "GET"
  const logged = context.requestLog.record({
    at: context.state.clock.nowMs(),
    origin,
    method,
    path: req.url ?? "/",
    headers: req.headers,
    requestId
  })
  const settle = () => {
    logged.status ??= res.statusCode
  }
  res.on("finish", settle)
  res.on("close", settle)
  try {
    context.state.sweepExpired()
    let url: URL
    try {
      // Prefixing (not resolving against a base) keeps "//host/x" a path, not another authority.
      const target = req.url ?? "/"
      if (!target.startsWith("/")) throw new TypeError("not an origin-form target")
      url = new URL(`http://emulator.invalid${target}`)
    } catch {
      await render(res, method, apiError(400, "invalid_request", "The request target is not a valid URL"), undefined)
      return
    }
    const match = router.match(method, url.pathname)
    if (!url.pathname.startsWith("/_control")) {
      const template =
        match.kind === "found" ? match.route.path : match.kind === "methodNotAllowed" ? match.template : undefined
      const delay = context.faults.delayFor(method, url.pathname, template)
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
    }
    if (match.kind === "notFound") {
      const fault = context.faults.take(method, url.pathname, undefined)
      await render(res, method, statusFault(fault) ?? apiError(404, "not_found", "No such route"), fault)
      return
    }
    if (match.kind === "methodNotAllowed") {
      await render(
        res,
        method,
        {
          ...apiError(405, "method_not_allowed", `Method ${method} is not allowed here`),
          headers: { Allow: match.allow.join(", ") }
        },
        undefined
      )
      return
    }
    // The control plane stays reliable whatever the faults say (a test must be able to clear them).
    const fault = match.route.path.startsWith("/_control")
      ? undefined
      : context.faults.take(method, url.pathname, match.route.path)
    const faulted = statusFault(fault)
    if (faulted) {
      req.resume()
      await render(res, method, faulted, fault)
      return
    }
    const body = await readBody(req)
    if (body === "tooLarge") {
      res.setHeader("Connection", "close")
      await render(res, method, apiError(413, "payload_too_large", "The request body exceeds 8 MiB"), undefined)
      return
    }
    const auth = authorize(context, match.route, req.headers.authorization)
    if (!auth.ok) {
      await render(res, method, auth.error, fault)
      return
    }
    const request: RouteRequest = {
      method,
      url,
      params: match.params,
      headers: req.headers,
      body,
      requestId,
      principal: auth.principal,
      raw: req,
      fault
    }
    const result = await match.route.handle(request, res)
    await render(res, method, result, fault)
  } catch (error) {
    process.stderr.write(
      `emulator: ${method} ${req.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
    )
    if (!res.headersSent) await render(res, method, apiError(500, "internal_error", "Internal error"), undefined)
    else res.destroy()
  }
}

const readBody = (req: IncomingMessage): Promise<Buffer | "tooLarge"> => {
  const declared = Number(req.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) {
    req.resume()
    return Promise.resolve("tooLarge")
  }
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let tooLarge = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) tooLarge = true
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(tooLarge ? "tooLarge" : Buffer.concat(chunks)))
    req.on("error", reject)
  })
}
