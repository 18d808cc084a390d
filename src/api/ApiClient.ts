/**
 * The typed client of the Download Service: one group per resource, each a set of
 * effects that fail only with `ApiError`. Build it with `ApiClient.layer` (given an
 * `ApiHttp`) or `ApiClient.layerLive(endpoints)` (node:http, endpoints checked), and supply
 * `Credentials` (an API key now, OAuth tokens later).
 *
 * Where the spec shows no request or response shape, this client uses the following, and
 * the emulator must agree (every response keeps the `data` envelope; extra fields pass):
 *
 * | operation                         | request body                        | response `data`                      |
 * | --------------------------------- | ----------------------------------- | ------------------------------------ |
 * | POST /files/delete                | `{ ids: string[] }`                 | `[{ id, result }]`                   |
 * | POST /files/{file}/download-link  | none                                | `{ url, expires_at }`                |
 * | POST /files/zip                   | `{ ids: string[] }`                 | `{ url, expires_at: string or null }`|
 * | POST /cache/check                 | `{ hashes: string[] }`              | any JSON, returned as is             |
 * | POST /downloads                   | `{ url or magnet, client_reference?, webhook_url?, directory? }` | `{ kind, selection or download }` |
 * | POST /downloads/upload            | multipart: `file` + the same fields | as POST /downloads                   |
 * | POST /download-selections/…/choices | `{ item_id }`                     | as POST /downloads                   |
 * | POST /downloads/{id}/cancel, retry | none                               | a download, or 204                   |
 * | GET /downloads                    | query `limit`, `cursor`, `client_reference` | download[] + pagination meta |
 * | GET /app-storage[/{key}], PUT     | PUT `{ value }`                     | `{ key, value, version }` (+ ETag)   |
 * | GET /files/{file}/state, PUT      | PUT `{ value }`                     | app_state object or null (+ ETag)    |
 */
import { Context, Effect, Layer } from "effect"
import { ApiEndpoints, type Endpoints } from "./ApiEndpoints.ts"
import type { ApiError } from "./ApiError.ts"
import { ApiHttp, type ApiObserver } from "./ApiHttp.ts"
import { type AccountApi, makeAccountApi } from "./account.ts"
import type { Credentials } from "./Credentials.ts"
import { type CacheApi, makeCacheApi } from "./cache.ts"
import { type ChangesApi, makeChangesApi } from "./changes.ts"
import { type DownloadsApi, makeDownloadsApi } from "./downloads.ts"
import { type FilesApi, makeFilesApi } from "./files.ts"
import { makeOAuthApi, type OAuthApi } from "./oauth.ts"
import { makeSelectionsApi, type SelectionsApi } from "./selections.ts"
import { makeServicesApi, type ServicesApi } from "./services.ts"
import { makeStateApi, type StateApi } from "./state.ts"
import { makeStorageApi, type StorageApi } from "./storage.ts"

export class ApiClient extends Context.Service<
  ApiClient,
  {
    readonly account: AccountApi
    readonly services: ServicesApi
    readonly files: FilesApi
    readonly changes: ChangesApi
    readonly state: StateApi
    readonly storage: StorageApi
    readonly cache: CacheApi
    readonly downloads: DownloadsApi
    readonly selections: SelectionsApi
    readonly oauth: OAuthApi
  }
>()("dlsync/api/ApiClient") {
  static readonly layer: Layer.Layer<ApiClient, never, ApiHttp> = Layer.effect(
    ApiClient,
    Effect.gen(function* () {
      const http = yield* ApiHttp
      return ApiClient.of({
        account: makeAccountApi(http),
        services: makeServicesApi(http),
        files: makeFilesApi(http),
        changes: makeChangesApi(http),
        state: makeStateApi(http),
        storage: makeStorageApi(http),
        cache: makeCacheApi(http),
        downloads: makeDownloadsApi(http),
        selections: makeSelectionsApi(http),
        oauth: makeOAuthApi(http)
      })
    })
  )

  /** The production client over node:http for the configured endpoints; its observer comes from the command. */
  static readonly layerLive = (endpoints: Endpoints): Layer.Layer<ApiClient, ApiError, Credentials | ApiObserver> =>
    ApiClient.layer.pipe(Layer.provide(ApiHttp.layerLive), Layer.provide(ApiEndpoints.layer(endpoints)))
}
