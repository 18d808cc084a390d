/** What the transfer engine (TransferEngine.ts) is asked for one file, and what it answers. */
import type { FileId } from "../domain/FileId.ts"
import type { LocalStat } from "../domain/LocalEntry.ts"

export interface TransferRequest {
  readonly fileId: FileId
  /** `size_bytes` of the remote record: the only size a finished file may have. */
  readonly size: number
  /** Set as the final file's mtime. */
  readonly remoteMtime: Date
  /** The mirror root (absolute); partial data lives under its `.dlsync/partial`. */
  readonly root: string
  /** Where the file lands, relative to the root (`/`-separated); its folder must exist. */
  readonly path: string
  /**
   * What `path` must still hold when the file lands (null: nothing). The landing is the
   * checked rename shared with the local operations (fs/landFile.ts `land`): it never replaces
   * anything else, and a refusal parks the file with the reason.
   */
  readonly replace: LocalStat | null
  /** For progress and logs; defaults to `path`. */
  readonly name?: string
}

export type TransferResult =
  | {
      readonly _tag: "Completed"
      readonly fileId: string
      /** The request's `path`. */
      readonly path: string
      /** The lstat of the landed file, to be recorded as written. */
      readonly written: LocalStat
      /** Bytes received in this call (less than the size after a resume). */
      readonly fetched: number
      readonly attempts: number
    }
  | { readonly _tag: "Parked"; readonly fileId: string; readonly reason: string; readonly attempts: number }
  | { readonly _tag: "PausedForSpace"; readonly fileId: string; readonly free: number; readonly needed: number }
  | {
      /** The service's rate limit asked for a wait beyond `maxRateLimitWaitMs`: not waited, not failed. */
      readonly _tag: "RateLimited"
      readonly fileId: string
      /** When the service takes link requests again (epoch ms). */
      readonly until: number
      readonly reason: string
    }
