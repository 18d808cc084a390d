/** Per-file state routes: GET/PUT/DELETE {base_url}/files/{file}/state (OAuth only). */
import type { FileStateStore } from "../fileState.ts"
import type { Route } from "../http.ts"

export const stateRoutes = (states: FileStateStore): ReadonlyArray<Route> => [
  {
    method: "GET",
    path: "/api/v1/files/:file/state",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["files:read", "storage:read"] },
    handle: (request) => states.get(request.principal, fileParam(request.params), request)
  },
  {
    method: "PUT",
    path: "/api/v1/files/:file/state",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["files:read", "storage:write"] },
    handle: (request) => states.put(request.principal, fileParam(request.params), request)
  },
  {
    method: "DELETE",
    path: "/api/v1/files/:file/state",
    auth: { kind: "bearer", apiKey: false, oauthScopes: ["files:read", "storage:write"] },
    handle: (request) => states.delete(request.principal, fileParam(request.params), request)
  }
]

const fileParam = (params: Readonly<Record<string, string>>): string => params.file ?? ""
