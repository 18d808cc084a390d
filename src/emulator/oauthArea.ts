/**
 * The auth-and-state half of the emulator, wired to the shared state: the OAuth server,
 * per-file state, app storage, downloads with selections, and webhook delivery.
 *
 * The server plugs it in with `authStateRoutes(context)` and `authStateControlRoutes(context)`;
 * both (and `authStateArea`) return the same instances for one emulator. The server resolves
 * OAuth bearers through `context.tokens`: when that is an `OAuthServer` (built with
 * `makeOAuthServer`), the area uses it, so tokens from the device, code and refresh grants
 * work on every API route.
 */
import { AppStorage } from "./appStorage.ts"
import type { EmulatorContext } from "./context.ts"
import type { DownloadHost } from "./downloadLifecycle.ts"
import { Downloads } from "./downloads.ts"
import { FileStateStore } from "./fileState.ts"
import type { Route } from "./http.ts"
import { OAuthServer } from "./oauth.ts"
import { downloadsControlRoutes, downloadsRoutes } from "./routes/downloads.ts"
import { oauthControlRoutes, oauthRoutes } from "./routes/oauth.ts"
import { stateRoutes } from "./routes/state.ts"
import { storageRoutes } from "./routes/storage.ts"
import type { EmulatorState } from "./state.ts"
import { WebhookSender } from "./webhooks.ts"

export interface AuthStateArea {
  readonly oauth: OAuthServer
  readonly fileStates: FileStateStore
  readonly storage: AppStorage
  readonly downloads: Downloads
  readonly webhooks: WebhookSender
  /** Stops the downloads timer and webhook deliveries (call on close). */
  readonly dispose: () => void
}

/** The OAuth server for an emulator, its device client being the one the emulator prints. */
export const makeOAuthServer = (
  state: EmulatorState,
  authUrl: () => string,
  options: { readonly accessTokenLifetimeSeconds?: number } = {}
): OAuthServer =>
  new OAuthServer({
    authUrl,
    now: state.clock.nowMs,
    defaultUserId: state.primaryUser.id,
    deviceClientId: state.defaultClientId,
    ...options
  })

/** The area's instances for this emulator, made and hooked into the state on first use. */
export const authStateArea = (context: EmulatorContext): AuthStateArea => {
  const existing = areas.get(context)
  if (existing !== undefined) return existing
  const { state } = context
  const oauth = context.tokens instanceof OAuthServer ? context.tokens : makeOAuthServer(state, () => context.urls.auth)
  const fileStates = new FileStateStore({
    clock: state.clock,
    files: { isAccessible: (userId, id) => state.liveItem(userId, id) !== undefined }
  })
  const unsubscribe = state.onRemoved((_, ids) => fileStates.removeResources(ids))
  state.appStateLookup = (principal, userId, fileId) =>
    principal.kind === "oauth" ? fileStates.lookup(userId, principal.clientId, fileId) : null
  const webhooks = new WebhookSender({ now: state.clock.nowMs })
  const downloads = new Downloads({ clock: state.clock, host: downloadHost(state), webhooks })
  const area: AuthStateArea = {
    oauth,
    fileStates,
    storage: new AppStorage({ clock: state.clock }),
    downloads,
    webhooks,
    dispose: () => {
      unsubscribe()
      downloads.lifecycle.dispose()
      webhooks.dispose()
    }
  }
  areas.set(context, area)
  return area
}

/** Every API route of the area ({auth_url} OAuth endpoints and {base_url} operations). */
export const authStateRoutes = (context: EmulatorContext): ReadonlyArray<Route> => {
  const area = authStateArea(context)
  return [
    ...oauthRoutes(area.oauth),
    ...stateRoutes(area.fileStates),
    ...storageRoutes(area.storage),
    ...downloadsRoutes(area.downloads)
  ]
}

/** The area's control routes under /_control. */
export const authStateControlRoutes = (context: EmulatorContext): ReadonlyArray<Route> => {
  const area = authStateArea(context)
  return [...oauthControlRoutes(area.oauth), ...downloadsControlRoutes(area.downloads.lifecycle, area.webhooks)]
}

const areas = new WeakMap<EmulatorContext, AuthStateArea>()

/** Downloads' view of the shared state: account caps and credits, and the file tree. */
const downloadHost = (state: EmulatorState): DownloadHost => ({
  limits: (userId) => state.user(userId)?.account.limits,
  takeDailyDownload: (userId) => {
    const daily = state.user(userId)?.account.limits.daily_downloads
    if (daily === undefined || daily === null) return true
    if (daily.remaining <= 0) return false
    daily.remaining--
    return true
  },
  spendCredit: (userId, amount) => {
    const account = state.user(userId)?.account
    if (account === undefined || account.creditsRemaining < amount) return false
    account.creditsRemaining -= amount
    return true
  },
  addFiles: (userId, { directory, folder, downloadId, files }) => {
    const base = folder === null ? directory : [directory, folder].filter((p) => p !== "").join("/")
    const items = state.addDownloadedFiles(userId, {
      directory: base,
      downloadId,
      files: files.map((f) => ({ path: f.path, sizeBytes: f.sizeBytes }))
    })
    const folderId = folder === null ? null : state.ensureFolderPath(userId, base.split("/"))
    return folderId ?? items[0]?.id ?? ""
  }
})
