/**
 * Turning a route's result into the response on the wire: the JSON envelope, 204/304
 * without a body, HEAD without a body, and the faults that shape a response (status_*
 * instead of the handler's answer; duplicate_items, malformed_json and the body faults of
 * BodyWriter on the way out).
 */
import type { ServerResponse } from "node:http"
import { BodyWriter, type Fault } from "./faults.ts"
import { apiError, type RouteResult } from "./http.ts"

/** The response a status fault replaces the handler's with, if it is one. */
export const statusFault = (fault: Fault | undefined): RouteResult | undefined => {
  if (fault === undefined) return undefined
  switch (fault.kind) {
    case "status_429":
      return {
        ...apiError(429, "rate_limited", "Too many requests"),
        headers: { "Retry-After": String(fault.retryAfterSeconds ?? 1) }
      }
    case "status_500":
      return apiError(500, "internal_error", "Injected server error")
    case "status_503": {
      const result = apiError(503, "service_unavailable", "Injected unavailability")
      return fault.retryAfterSeconds === undefined
        ? result
        : { ...result, headers: { "Retry-After": String(fault.retryAfterSeconds) } }
    }
    default:
      return undefined
  }
}

export const render = async (
  res: ServerResponse,
  method: string,
  result: RouteResult,
  fault: Fault | undefined
): Promise<void> => {
  if (result.kind === "raw") return
  if (res.headersSent) return
  if (result.kind === "empty" || result.status === 204 || result.status === 304) {
    res.writeHead(result.status, result.headers)
    res.end()
    return
  }
  let bytes: Buffer
  if (result.kind === "bytes") {
    bytes = result.body
    res.writeHead(result.status, { "Content-Length": String(bytes.length), ...result.headers })
  } else {
    let body = result.body
    if (fault?.kind === "duplicate_items") body = duplicateItems(body)
    let text = JSON.stringify(body)
    if (fault?.kind === "malformed_json") text = text.slice(0, Math.max(1, Math.floor(text.length / 2)))
    bytes = Buffer.from(text, "utf8")
    res.writeHead(result.status, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": String(bytes.length),
      "Cache-Control": "no-store",
      ...result.headers
    })
  }
  if (method === "HEAD") {
    res.end()
    return
  }
  const writer = new BodyWriter(res, fault, bytes.length)
  if (await writer.write(bytes)) await writer.end()
}

const duplicateItems = (body: unknown): unknown => {
  if (typeof body !== "object" || body === null || !("data" in body) || !Array.isArray(body.data)) return body
  return { ...body, data: body.data.flatMap((item: unknown) => [item, item]) }
}
