/**
 * Matches a method and path against registered routes. Templates use `:name` segments;
 * parameters are URL-decoded. A path that some route serves under another method is a
 * 405 (with the allowed methods); HEAD falls back to the GET route.
 */
import type { Route } from "./http.ts"

export type RouteMatch =
  | { readonly kind: "found"; readonly route: Route; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: "methodNotAllowed"; readonly allow: ReadonlyArray<string>; readonly template: string }
  | { readonly kind: "notFound" }

export class Router {
  readonly #routes: ReadonlyArray<{ readonly route: Route; readonly segments: ReadonlyArray<string> }>

  constructor(routes: ReadonlyArray<Route>) {
    const seen = new Set<string>()
    for (const route of routes) {
      const key = `${route.method} ${route.path}`
      if (seen.has(key)) throw new Error(`duplicate route ${key}`)
      seen.add(key)
    }
    this.#routes = routes.map((route) => ({ route, segments: route.path.split("/") }))
  }

  match(method: string, pathname: string): RouteMatch {
    const parts = pathname.split("/")
    const candidates: Array<{ readonly route: Route; readonly params: Record<string, string> }> = []
    for (const { route, segments } of this.#routes) {
      const params = matchSegments(segments, parts)
      if (params !== undefined) candidates.push({ route, params })
    }
    if (candidates.length === 0) return { kind: "notFound" }
    // Literal segments win over parameters: /files/changes before /files/:file.
    candidates.sort((a, b) => (specificity(b.route.path) > specificity(a.route.path) ? 1 : -1))
    const exact = candidates.find((c) => c.route.method === method)
    if (exact) return { kind: "found", ...exact }
    const get = method === "HEAD" ? candidates.find((c) => c.route.method === "GET") : undefined
    if (get) return { kind: "found", ...get }
    const allow = [...new Set(candidates.map((c) => c.route.method))]
    if (allow.includes("GET") && !allow.includes("HEAD")) allow.push("HEAD")
    return { kind: "methodNotAllowed", allow, template: candidates[0]!.route.path }
  }
}

const specificity = (path: string): string =>
  path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "0" : "1"))
    .join("")

const matchSegments = (
  segments: ReadonlyArray<string>,
  parts: ReadonlyArray<string>
): Record<string, string> | undefined => {
  if (segments.length !== parts.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    const part = parts[i]!
    if (segment.startsWith(":")) {
      if (part.length === 0) return undefined
      try {
        params[segment.slice(1)] = decodeURIComponent(part)
      } catch {
        return undefined
      }
    } else if (segment !== part) return undefined
  }
  return params
}
