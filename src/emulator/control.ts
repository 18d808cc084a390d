/**
 * The control API, in process: what tests and `/_control` use to change the world behind
 * the client's back. Every tree operation goes through FileTree, so it shows in the change
 * feed exactly as a change made by the service would. Operations act on the primary user
 * unless `userId` says otherwise. Errors: TreeError (unknown id, not a folder, cycle) and
 * RangeError (invalid arguments).
 */

import type { EmulatorContext } from "./context.ts"
import type { Fault, FaultSpec } from "./faults.ts"
import { type DeleteOutcome, type Item, type ItemPatch, type PosterSpec, TreeError } from "./item.ts"
import { classify, type Kind } from "./kinds.ts"
import type { Media } from "./media.ts"
import type { LoggedRequest, Origin } from "./requestLog.ts"
import { type Account, ALL_SCOPES, type Limits, type User } from "./state.ts"
import type { ZipMethod } from "./zip.ts"

export interface NewFile {
  readonly userId?: string | undefined
  readonly parentId?: string | null | undefined
  readonly name: string
  readonly sizeBytes?: number | undefined
  readonly mimeType?: string | undefined
  readonly kind?: Kind | undefined
  readonly locked?: boolean | undefined
  readonly downloadId?: string | null | undefined
  readonly expiresAt?: number | undefined
  readonly media?: Media | null | undefined
  readonly poster?: PosterSpec | null | undefined
}

export interface NewFolder {
  readonly userId?: string | undefined
  readonly parentId?: string | null | undefined
  readonly name: string
  readonly locked?: boolean | undefined
}

export interface NewUser {
  readonly userId: string
  readonly apiKey: string
  readonly accessToken: string
  readonly refreshToken: string
}

export interface AccountPatch {
  readonly name?: string | undefined
  readonly email?: string | undefined
  readonly emailVerified?: boolean | undefined
  readonly plan?: Account["plan"] | undefined
  readonly creditsRemaining?: number | undefined
  readonly limits?: Limits | undefined
}

export interface ControlApi {
  addUser(options?: { readonly name?: string | undefined; readonly email?: string | undefined }): NewUser
  addFile(spec: NewFile): Item
  addFolder(spec: NewFolder): Item
  item(id: string, userId?: string): Item | undefined
  edit(id: string, patch: ItemPatch, userId?: string): Item
  rename(id: string, name: string, userId?: string): Item
  move(id: string, parentId: string | null, userId?: string): Item
  lock(id: string, userId?: string): Item
  unlock(id: string, userId?: string): Item
  remove(
    ids: ReadonlyArray<string>,
    userId?: string
  ): ReadonlyArray<{ readonly id: string; readonly result: DeleteOutcome }>
  /** Every cursor issued so far answers 410 cursor_expired. */
  expireCursors(): void
  /** Moves the emulator's clock forward (links, cursors, tokens, device codes expire). */
  advanceClock(ms: number): void
  updateAccount(patch: AccountPatch, userId?: string): Account
  setCached(hashes: ReadonlyArray<string>, cached: boolean): void
  requests(filter?: {
    readonly origin?: Origin | undefined
    readonly afterSeq?: number | undefined
  }): ReadonlyArray<LoggedRequest>
  clearRequests(): void
  addFault(spec: FaultSpec): Fault
  faults(): ReadonlyArray<Fault>
  removeFault(id: string): boolean
  clearFaults(): void
  /** CDN file responses streaming now and the most at once since the start or the last reset. */
  cdnDownloads(options?: { readonly resetPeak?: boolean | undefined }): {
    readonly active: number
    readonly peak: number
  }
  /** Caps every CDN file response (each connection) at this many bytes per second; null lifts it. */
  setCdnRatePerConnection(bytesPerSecond: number | null): void
  /**
   * How ZIP archives are written (`method`: stored, the default, or deflate) and where ZIP
   * links point (`base`: a proxy in front of the emulator's CDN origin, e.g. nginx
   * forwarding `{base}/zip/…` to it; null: the CDN origin). Unset fields keep their value.
   */
  setZip(settings: { readonly method?: ZipMethod | undefined; readonly base?: string | null | undefined }): void
}

export const makeControlApi = (context: EmulatorContext): ControlApi => {
  const { state } = context
  const userOf = (userId: string | undefined): User => {
    const user = userId === undefined ? state.primaryUser : state.user(userId)
    if (user === undefined) throw new TreeError("not_found", `no user ${userId}`)
    return user
  }
  const checkName = (name: string) => {
    if (typeof name !== "string" || name.length === 0) throw new RangeError("name must be a non-empty string")
  }
  return {
    addUser: (options = {}) => {
      const user = state.addUser(options)
      const pair = context.tokens.issue(user.id, state.defaultClientId, ALL_SCOPES)
      return { userId: user.id, apiKey: user.apiKey, ...pair }
    },
    addFile: (spec) => {
      checkName(spec.name)
      if (spec.sizeBytes !== undefined && !(Number.isSafeInteger(spec.sizeBytes) && spec.sizeBytes >= 0)) {
        throw new RangeError("sizeBytes must be a non-negative integer")
      }
      const classified = classify(spec.name)
      return userOf(spec.userId).tree.add({
        type: "file",
        parentId: spec.parentId ?? null,
        name: spec.name,
        kind: spec.kind ?? classified.kind,
        mimeType: spec.mimeType ?? classified.mimeType,
        sizeBytes: spec.sizeBytes ?? 0,
        locked: spec.locked,
        downloadId: spec.downloadId,
        expiresAt: spec.expiresAt,
        media: spec.media,
        poster: spec.poster
      })
    },
    addFolder: (spec) => {
      checkName(spec.name)
      return userOf(spec.userId).tree.add({
        type: "folder",
        parentId: spec.parentId ?? null,
        name: spec.name,
        kind: "folder",
        mimeType: "",
        locked: spec.locked
      })
    },
    item: (id, userId) => userOf(userId).tree.get(id),
    edit: (id, patch, userId) => {
      if (patch.name !== undefined) checkName(patch.name)
      return userOf(userId).tree.update(id, patch)
    },
    rename: (id, name, userId) => {
      checkName(name)
      return userOf(userId).tree.update(id, { name })
    },
    move: (id, parentId, userId) => userOf(userId).tree.move(id, parentId),
    lock: (id, userId) => userOf(userId).tree.update(id, { locked: true }),
    unlock: (id, userId) => userOf(userId).tree.update(id, { locked: false }),
    remove: (ids, userId) => userOf(userId).tree.remove(ids),
    expireCursors: () => {
      state.cursorEpoch++
    },
    advanceClock: (ms) => state.clock.advance(ms),
    updateAccount: (patch, userId) => {
      const account = userOf(userId).account
      if (patch.name !== undefined) account.name = patch.name
      if (patch.email !== undefined) account.email = patch.email
      if (patch.emailVerified !== undefined) account.emailVerified = patch.emailVerified
      if (patch.plan !== undefined) account.plan = patch.plan
      if (patch.creditsRemaining !== undefined) account.creditsRemaining = patch.creditsRemaining
      if (patch.limits !== undefined) account.limits = patch.limits
      return account
    },
    setCached: (hashes, cached) => {
      for (const hash of hashes) {
        if (cached) state.cachedHashes.add(hash.toLowerCase())
        else state.cachedHashes.delete(hash.toLowerCase())
      }
    },
    requests: (filter) => context.requestLog.list(filter),
    clearRequests: () => context.requestLog.clear(),
    addFault: (spec) => context.faults.add(spec),
    faults: () => context.faults.list(),
    removeFault: (id) => context.faults.remove(id),
    clearFaults: () => context.faults.clear(),
    cdnDownloads: (options) => {
      const downloads = context.cdnDownloads
      const seen = { active: downloads.active, peak: downloads.peak }
      if (options?.resetPeak === true) downloads.resetPeak()
      return seen
    },
    setCdnRatePerConnection: (bytesPerSecond) => {
      if (bytesPerSecond !== null && !(Number.isInteger(bytesPerSecond) && bytesPerSecond >= 1)) {
        throw new RangeError("bytes_per_second must be an integer ≥ 1, or null")
      }
      context.cdnDownloads.ratePerConnection = bytesPerSecond
    },
    setZip: (settings) => {
      if (settings.base !== undefined && settings.base !== null && !URL.canParse(settings.base)) {
        throw new RangeError("base must be an absolute URL")
      }
      if (settings.method !== undefined) context.zip.method = settings.method
      if (settings.base !== undefined) context.zip.base = settings.base?.replace(/\/+$/, "") ?? null
    }
  }
}
