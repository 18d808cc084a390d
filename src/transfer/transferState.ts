/**
 * What the transfer engine's parts share: the engine's dependencies, the partial file a
 * transfer works on, and what one call knows about that file's data.
 */
import { Effect } from "effect"
import type { Bandwidth } from "./Bandwidth.ts"
import type { ConnectionBudget } from "./connectionBudget.ts"
import type { LeanPool } from "./leanPool.ts"
import type { ProgressTracker } from "./ProgressTracker.ts"
import type { DurableSegment, Segment } from "./segments.ts"
import { faultFromError, type TransferFault } from "./TransferFault.ts"
import type { TransferFsShape } from "./TransferFs.ts"
import type { TransferJournal } from "./TransferJournal.ts"
import type { DownloadLink, TransferLinks } from "./TransferLinks.ts"
import type { TransferOptions } from "./TransferOptions.ts"

export interface Deps {
  readonly options: TransferOptions
  readonly journal: TransferJournal["Service"]
  readonly fs: TransferFsShape
  readonly links: TransferLinks["Service"]
  readonly limiter: Bandwidth["Service"]
  readonly progress: ProgressTracker["Service"]
  readonly lean: LeanPool
  /** Connections per CDN host over every file (transfers.max_connections). */
  readonly connections: ConnectionBudget
  readonly linkCache: Map<string, { readonly link: DownloadLink; readonly obtainedAt: number }>
  /** Partial directories known to exist. */
  readonly knownDirs: Set<string>
  /** The last statfs per root, reused for `FREE_SPACE_TTL_MS`. */
  readonly freeCache: Map<string, { readonly at: number; readonly free: number }>
}

/** The remote file being fetched and its partial file. */
export interface PartialFile {
  readonly fileId: string
  /** `size_bytes` of the remote record. */
  readonly size: number
  /** The partial file's path relative to the mirror root (as journaled). */
  readonly partialRel: string
  readonly partialAbs: string
}

/** What one call knows about the file's partial data. */
export interface FileState {
  /** null: plan afresh at the next attempt (nothing of this version written). */
  segments: Array<Segment> | null
  /** What the journal holds as durable (the last commit). */
  durable: ReadonlyArray<DurableSegment>
  etag: string | null
  lastModified: string | null
  /** The validators above belong to the bytes written (learned from a response or the journal). */
  validatorsKnown: boolean
  noRanges: boolean
  attempts: number
  lastError: string | null
  /** A record for the file exists in the journal. */
  journaled: boolean
  /** Bytes written since the last fdatasync. */
  unsynced: number
  /** Bytes of the file not yet written in this attempt (the committer's near-end flushes). */
  toArrive: number
  /** Times writes waited for a commit (durability backpressure), for the debug log. */
  writesHeld: number
  partialDirSynced: boolean
  /** Wakes the committer when a flush is due (commitPolicy.ts). */
  wake: (() => void) | null
  /** A commit (fdatasync + journal save) is running. */
  committing: boolean
  /** Writes held while a commit runs and another batch is already written. */
  held: Array<() => void>
}

/** A file system call as an Effect failing with a classified fault. */
export const io = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, TransferFault> =>
  Effect.tryPromise({ try: f, catch: (e) => faultFromError(e, what) })
