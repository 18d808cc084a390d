/**
 * Coalescing progress reports (pure): while a file downloads, at most one entry per
 * `intervalMs` leaves for the outbox; a change of state (a transition) always leaves at once.
 *
 * Invariants:
 * - The first report of a file, and every report whose state differs from the last one
 *   emitted, is emitted immediately, superseding anything pending for that file.
 * - A same-state report within the interval is held as the file's pending entry (the
 *   latest wins) and emitted by `due` once the interval since the last emission has passed.
 * - After a final state (complete, failed, locked, skipped) is emitted the file is
 *   forgotten, so the table holds only files in flight.
 */
import { isFinal, type ProgressEntry, type ProgressState } from "./ProgressEntry.ts"

export interface Slot {
  readonly lastState: ProgressState
  readonly lastEmittedAt: number
  readonly pending: ProgressEntry | undefined
}

export type Coalescer<K> = ReadonlyMap<K, Slot>

export const emptyCoalescer = <K>(): Coalescer<K> => new Map()

/** Takes one report; `emit` is the entry to enqueue now, if any. */
export const offer = <K>(
  table: Coalescer<K>,
  fileId: K,
  entry: ProgressEntry,
  now: number,
  intervalMs: number
): { readonly table: Coalescer<K>; readonly emit: ProgressEntry | undefined } => {
  const slot = table.get(fileId)
  if (slot === undefined || slot.lastState !== entry.state || now - slot.lastEmittedAt >= intervalMs) {
    return { table: emitted(table, fileId, entry, now), emit: entry }
  }
  const next = new Map(table)
  next.set(fileId, { ...slot, pending: entry })
  return { table: next, emit: undefined }
}

/** Pending entries whose interval has passed (all of them with `force`), and the table without them. */
export const due = <K>(
  table: Coalescer<K>,
  now: number,
  intervalMs: number,
  force = false
): { readonly table: Coalescer<K>; readonly emit: ReadonlyArray<readonly [K, ProgressEntry]> } => {
  const out: Array<readonly [K, ProgressEntry]> = []
  let next: Coalescer<K> = table
  for (const [fileId, slot] of table) {
    if (slot.pending === undefined || (!force && now - slot.lastEmittedAt < intervalMs)) continue
    out.push([fileId, slot.pending])
    next = emitted(next, fileId, slot.pending, now)
  }
  return { table: next, emit: out }
}

/** When the next pending entry falls due, or undefined when nothing is pending. */
export const nextDueAt = <K>(table: Coalescer<K>, intervalMs: number): number | undefined => {
  let earliest: number | undefined
  for (const slot of table.values()) {
    if (slot.pending === undefined) continue
    const at = slot.lastEmittedAt + intervalMs
    if (earliest === undefined || at < earliest) earliest = at
  }
  return earliest
}

// ---------------------------------------------------------------------------------------

const emitted = <K>(table: Coalescer<K>, fileId: K, entry: ProgressEntry, now: number): Coalescer<K> => {
  const next = new Map(table)
  if (isFinal(entry.state)) next.delete(fileId)
  else next.set(fileId, { lastState: entry.state, lastEmittedAt: now, pending: undefined })
  return next
}
