/**
 * Whether a browser sent a request from a page of another origin, which no state-changing
 * request of a local server takes (any web page the user visits can POST to 127.0.0.1): by
 * the Origin (its host and port against the Host), else the Referer, else Sec-Fetch-Site
 * (only same-origin and none are the server's own); with none of them (the *arr apps, curl,
 * scripts) no: a browser always sends one of them with a cross-site POST.
 */
import type { HttpServerRequest } from "effect/http"

export const isCrossSite = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const { origin, referer, host } = request.headers
  const site = request.headers["sec-fetch-site"]?.toLowerCase()
  if (site !== undefined && site !== "same-origin" && site !== "none") return true
  const source = origin ?? referer
  if (source === undefined) return false
  return !URL.canParse(source) || new URL(source).host.toLowerCase() !== (host ?? "").toLowerCase()
}
