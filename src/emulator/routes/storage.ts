/** Application storage routes: {base_url}/app-storage and /app-storage/{key} (OAuth only). */
import type { AppStorage } from "../appStorage.ts"
import type { Route } from "../http.ts"

export const storageRoutes = (storage: AppStorage): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/api/v1/app-storage",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["storage:read"] },
    handle: (request) => storage.list(request.principal)
  },
  {
    method: "GET",
    path: "/api/v1/app-storage/:key",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["storage:read"] },
    handle: (request) => storage.get(request.principal, keyParam(request.params), request)
  },
  {
    method: "PUT",
    path: "/api/v1/app-storage/:key",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["storage:write"] },
    handle: (request) => storage.put(request.principal, keyParam(request.params), request)
  },
  {
    method: "DELETE",
    path: "/api/v1/app-storage/:key",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["storage:write"] },
    handle: (request) => storage.delete(request.principal, keyParam(request.params), request)
  }
]

const keyParam = (params: Readonly<Record<string, string>>): string => params.key ?? ""
