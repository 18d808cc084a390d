/**
 * The change log of one tree: `(seq, id)` entries appended in ascending seq, one for every
 * change. An entry is current while its item (or tombstone) still carries that seq; older
 * entries for the same id are stale, skipped by the reader and dropped by `compact`.
 *
 * Being sorted by seq, "entries after seq S" is a binary search plus a walk over the
 * entries themselves: an idle poll costs O(log n), whatever the size of the tree.
 */
import type { Item, Tombstone } from "./item.ts"
import { partitionPoint } from "./partitionPoint.ts"

/** One entry of a change page: a live item or a tombstone. */
export type Change =
  | { readonly deleted: false; readonly item: Item }
  | { readonly deleted: true; readonly tombstone: Tombstone }

export interface ChangePage {
  readonly changes: ReadonlyArray<Change>
  /** Seq to resume after. */
  readonly nextAfter: number
  readonly hasMore: boolean
}

export class ChangeLog {
  #seqs: Array<number> = []
  #ids: Array<string> = []

  /** Appends an entry; `seq` is above every seq already in the log. */
  append(seq: number, id: string): void {
    this.#seqs.push(seq)
    this.#ids.push(id)
  }

  /** Visits the entries with seq > `after` in order, while `visit` returns true. */
  scanAfter(after: number, visit: (seq: number, id: string) => boolean): void {
    for (let index = partitionPoint(this.#seqs, (seq) => seq < after + 1); index < this.#seqs.length; index++) {
      if (!visit(this.#seqs[index]!, this.#ids[index]!)) return
    }
  }

  /**
   * Drops stale entries once they outnumber the `current` ones (amortized O(1) per
   * change); `isCurrent` tells which entries stay.
   */
  compact(current: number, isCurrent: (seq: number, id: string) => boolean): void {
    if (this.#seqs.length <= 2 * current + 1024) return
    const seqs: Array<number> = []
    const ids: Array<string> = []
    for (let i = 0; i < this.#seqs.length; i++) {
      const seq = this.#seqs[i]!
      const id = this.#ids[i]!
      if (isCurrent(seq, id)) {
        seqs.push(seq)
        ids.push(id)
      }
    }
    this.#seqs = seqs
    this.#ids = ids
  }
}
