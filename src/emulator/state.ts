/**
 * The emulator's shared state: users with their account, personal API key and file tree,
 * the clock, the signing secret, and the hooks other areas (OAuth, file state, downloads)
 * plug into. One instance per running emulator; nothing here does I/O.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"
import { type EmulatorClock, formatMicros, makeClock } from "./clock.ts"
import type { Principal } from "./http.ts"
import type { Item, PosterSpec } from "./item.ts"
import { classify, type Kind } from "./kinds.ts"
import type { Media } from "./media.ts"
import { FileTree } from "./tree.ts"

/** Every scope the spec names; the ready token pair carries all of them. */
export const ALL_SCOPES = ["user:read", "downloads:read", "files:read", "storage:read", "storage:write"] as const

/** The fixed, service-specific prefix of personal API keys. */
export const API_KEY_PREFIX = "dls_"

export interface Limits {
  daily_downloads: { limit: number; remaining: number; resets_at: string } | null
  daily_download_bytes: { limit: number; remaining: number; resets_at: string } | null
  max_file_size_bytes: number | null
  concurrent_downloads: number | null
  concurrent_torrents: number | null
}

export interface Account {
  name: string
  email: string
  emailVerified: boolean
  readonly createdAt: number
  plan: { name: string; expires_at: string } | null
  creditsRemaining: number
  limits: Limits
}

export interface User {
  readonly id: string
  readonly apiKey: string
  readonly account: Account
  readonly tree: FileTree
}

/** How bearer tokens that are not API keys become principals (the OAuth server, oauth.ts). */
export interface AccessTokens {
  resolveAccessToken(token: string): Principal | undefined
  /** A ready token pair for a user and client, e.g. for `--json` and tests. */
  issue(
    userId: string,
    clientId: string,
    scopes: ReadonlyArray<string>
  ): { readonly accessToken: string; readonly refreshToken: string }
}

/** The `app_state` object of a record, as the file-state area stores it. */
export type AppStateLookup = (principal: Principal, userId: string, fileId: string) => unknown

/** A file produced by a completed download; `path` may contain "/" for subfolders. */
export interface DownloadedFile {
  readonly path: string
  readonly sizeBytes: number
  readonly mimeType?: string
  readonly kind?: Kind
  readonly media?: Media | null
  readonly poster?: PosterSpec | null
}

export interface StateOptions {
  /** Lifetime of signed CDN links. */
  readonly linkTtlMs?: number
  /** Age after which a change cursor answers 410 cursor_expired. */
  readonly cursorTtlMs?: number
}

export class EmulatorState {
  readonly clock: EmulatorClock
  /** Key for cursors and CDN link signatures. */
  readonly secret: Buffer = randomBytes(32)
  readonly users = new Map<string, User>()
  /** The OAuth client id printed by `dlsync emulator` (a public client with Device Flow). */
  readonly defaultClientId: string = randomUUID()
  readonly primaryUser: User
  linkTtlMs: number
  cursorTtlMs: number
  /** Cursors signed before this epoch answer 410 (the control API's "expire cursors"). */
  cursorEpoch = 0
  /** Info hashes the torrent cache holds (lowercase hex). */
  readonly cachedHashes = new Set<string>()
  /** Replaced by the file-state area; null means "nothing stored". */
  appStateLookup: AppStateLookup = () => null
  readonly #key: KeyObject = createSecretKey(this.secret)
  readonly #apiKeys = new Map<string, string>()
  readonly #removedListeners = new Set<(userId: string, ids: ReadonlyArray<string>) => void>()
  #nextId = 1
  #nextUser = 1

  constructor(options: StateOptions = {}, clock: EmulatorClock = makeClock()) {
    this.clock = clock
    this.linkTtlMs = options.linkTtlMs ?? 6 * 3600_000
    this.cursorTtlMs = options.cursorTtlMs ?? 30 * 86_400_000
    this.primaryUser = this.addUser({ name: "Demo User", email: "demo@example.com" })
  }

  /** A new user with an empty tree and a fresh personal API key. */
  addUser(options: { readonly name?: string | undefined; readonly email?: string | undefined } = {}): User {
    const n = this.#nextUser++
    const id = `usr_${String(n).padStart(6, "0")}`
    const apiKey = API_KEY_PREFIX + randomBytes(24).toString("base64url")
    const now = this.clock.tick()
    const user: User = {
      id,
      apiKey,
      account: {
        name: options.name ?? `User ${n}`,
        email: options.email ?? `user${n}@example.com`,
        emailVerified: true,
        createdAt: now,
        plan: { name: "Pro", expires_at: formatMicros(now + 365 * 86_400_000_000) },
        creditsRemaining: 1000,
        limits: {
          daily_downloads: null,
          daily_download_bytes: null,
          max_file_size_bytes: null,
          concurrent_downloads: 5,
          concurrent_torrents: 3
        }
      },
      tree: new FileTree(
        this.clock,
        () => this.newItemId(),
        (ids) => {
          for (const listener of this.#removedListeners) listener(id, ids)
        }
      )
    }
    this.users.set(id, user)
    this.#apiKeys.set(apiKey, id)
    return user
  }

  user(userId: string): User | undefined {
    return this.users.get(userId)
  }

  /** The principal of a personal API key, or undefined. */
  apiKeyPrincipal(token: string): Principal | undefined {
    const userId = this.#apiKeys.get(token)
    return userId === undefined ? undefined : { kind: "apiKey", userId }
  }

  /** A live (not deleted) item of this user, or undefined (other users' ids included). */
  liveItem(userId: string, id: string): Item | undefined {
    return this.users.get(userId)?.tree.get(id)
  }

  /** Expiry cleanup for every user (cheap unless an item's expires_at has passed). */
  sweepExpired(): void {
    const now = this.clock.nowMs() * 1000
    for (const user of this.users.values()) user.tree.expireDue(now)
  }

  /** A live item of any user, by id (CDN links carry only the id). */
  findItem(id: string): { readonly user: User; readonly item: Item } | undefined {
    for (const user of this.users.values()) {
      const item = user.tree.get(id)
      if (item !== undefined) return { user, item }
    }
    return undefined
  }

  /**
   * Calls `listener(userId, ids)` after items are removed, descendants included (file state
   * is removed with its file). Returns the unsubscribe function.
   */
  onRemoved(listener: (userId: string, ids: ReadonlyArray<string>) => void): () => void {
    this.#removedListeners.add(listener)
    return () => this.#removedListeners.delete(listener)
  }

  /**
   * Adds a completed download's files under the folder path `directory` ("" or "/" = root;
   * missing folders are created, existing ones reused by exact name). Returns the files.
   */
  addDownloadedFiles(
    userId: string,
    options: { readonly directory: string; readonly downloadId: string; readonly files: ReadonlyArray<DownloadedFile> }
  ): ReadonlyArray<Item> {
    const user = this.users.get(userId)
    if (!user) throw new Error(`no user ${userId}`)
    const base = this.ensureFolderPath(userId, splitPath(options.directory))
    return options.files.map((file) => {
      const parts = splitPath(file.path)
      const name = parts.pop()
      if (name === undefined) throw new Error(`empty file path in download ${options.downloadId}`)
      const parentId = parts.length === 0 ? base : this.ensureFolderPath(userId, parts, base)
      const classified = classify(name)
      return user.tree.add({
        type: "file",
        parentId,
        name,
        kind: file.kind ?? classified.kind,
        mimeType: file.mimeType ?? classified.mimeType,
        sizeBytes: file.sizeBytes,
        downloadId: options.downloadId,
        media: file.media ?? null,
        poster: file.poster ?? null
      })
    })
  }

  /**
   * The id of the folder at `names` below `from` (null = root), creating missing ones.
   * Empty names (from "a//b" or a leading "/") are skipped.
   */
  ensureFolderPath(userId: string, names: ReadonlyArray<string>, from: string | null = null): string | null {
    const user = this.users.get(userId)
    if (!user) throw new Error(`no user ${userId}`)
    let parent = from
    for (const name of names) {
      if (name.length === 0) continue
      let found: string | undefined
      for (const id of user.tree.childIds(parent)) {
        const child = user.tree.get(id)
        if (child?.type === "folder" && child.name === name) {
          found = id
          break
        }
      }
      parent = found ?? user.tree.add({ type: "folder", parentId: parent, name, kind: "folder", mimeType: "" }).id
    }
    return parent
  }

  newItemId(): string {
    return `i${(this.#nextId++).toString(36).padStart(9, "0")}`
  }

  /** HMAC-SHA-256 of `message` under the emulator's secret, base64url. */
  sign(message: string): string {
    return createHmac("sha256", this.#key).update(message).digest("base64url")
  }

  verify(message: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(message))
    const given = Buffer.from(signature)
    return expected.length === given.length && timingSafeEqual(expected, given)
  }
}

const splitPath = (path: string): Array<string> => path.split("/").filter((part) => part.length > 0)
