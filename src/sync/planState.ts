/**
 * The state of one pass of planning: the simulated namespace (namespace.ts), what the
 * phases learned of each item so far, and the actions emitted, one list per place in the
 * order the executor keeps (see planner.ts).
 */
import type { FileId } from "../domain/FileId.ts"
import type { LocalEntry, LocallyDeleted, LocalStat } from "../domain/LocalEntry.ts"
import type { ItemType, RemoteItem } from "../domain/RemoteItem.ts"
import { withInfix } from "./names.ts"
import { Namespace } from "./namespace.ts"
import type { Action, PlanInput, SkipCode } from "./planTypes.ts"
import { DLSYNC_DIR } from "./tree.ts"

/** Where a folder or file waits while another item takes its place (see `stageOccupant`). */
export const MOVING_DIR = `${DLSYNC_DIR}/moving`

/** Why the children of a folder are not placed: it was deleted locally, or could not be placed. */
export type Block = "locally_deleted" | "blocked"

/** One pass of planning; holds the simulated namespace while actions are emitted in order. */
export class PlanState extends Namespace {
  readonly input: PlanInput
  readonly entriesById = new Map<string, LocalEntry>()
  readonly markers = new Map<string, LocallyDeleted>()
  readonly processed = new Set<string>()
  readonly blocked = new Map<string, Block>()
  readonly desiredById = new Map<string, string>()
  /** Remote ids of folder entries removed in this pass (RemoveFolder after the structure). */
  readonly removedFolders = new Set<string>()
  readonly date: string

  readonly forgets: Array<Action> = []
  readonly removals: Array<Action> = []
  readonly structure: Array<Action> = []
  readonly folderRemovals: Array<Action> = []
  readonly downloads: Array<Action> = []
  readonly skips: Array<Action> = []

  constructor(input: PlanInput) {
    super(input.local, input.disk, input.config.caseInsensitive)
    this.input = input
    for (const e of input.local) this.entriesById.set(e.remoteId, e)
    for (const m of input.locallyDeleted) this.markers.set(m.remoteId, m)
    this.date = input.now.toISOString().slice(0, 10)
  }

  /** The actions emitted, in the order the executor keeps. */
  actions(): ReadonlyArray<Action> {
    return [
      ...this.forgets,
      ...this.removals,
      ...this.structure,
      ...this.folderRemovals,
      ...this.downloads,
      ...this.skips
    ]
  }

  rename(
    from: string,
    to: string,
    remoteId: FileId,
    type: ItemType,
    item: RemoteItem | null,
    expected: LocalStat,
    reason: string
  ): void {
    this.structure.push({ _tag: "Rename", from, to, remoteId, type, item, expected, reason })
    this.renames.push({ from, to, fromKey: this.key(from), toKey: this.key(to) })
  }

  conflictCopy(path: string, remoteId: FileId, expected: LocalStat, reason: string): void {
    let n = 1
    let to = conflictPath(path, this.date, n)
    while (this.occupant(to, remoteId)._tag !== "Free") to = conflictPath(path, this.date, ++n)
    this.claimed.add(this.key(to))
    this.structure.push({ _tag: "ConflictCopy", from: path, to, remoteId, expected, reason })
  }

  markDeleted(path: string, remoteId: FileId, reason: string): void {
    this.structure.push({ _tag: "MarkLocallyDeleted", path, remoteId, reason })
  }

  skip(code: SkipCode, path: string | null, remoteId: FileId, reason: string): void {
    this.skips.push({ _tag: "Skip", code, path, remoteId, reason })
  }
}

/** `dir/name.conflict-<date>[-n].ext` for `path`. */
export const conflictPath = (path: string, date: string, n: number): string => {
  const slash = path.lastIndexOf("/")
  const dir = slash < 0 ? "" : path.slice(0, slash + 1)
  const name = path.slice(slash + 1)
  return dir + withInfix(name, `.conflict-${date}${n > 1 ? `-${n}` : ""}`)
}
