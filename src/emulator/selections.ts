/**
 * Download selections: the choices a source needs before its download starts.
 *
 * Invariants:
 * - A selection belongs to one user; others get 404.
 * - A choice names an item with `selectable=true` (422 otherwise) and arrives before
 *   `expires_at` (409 `selection_expired` after it).
 * - A selection takes one choice: it is then resolved (409 `selection_resolved` on another),
 *   and the next stage, if any, is a new selection with a new id and new items.
 */
import { randomBytes } from "node:crypto"
import { formatMicros } from "./clock.ts"
import type { SelectionItemSpec } from "./downloadsSources.ts"
import { apiError, type RouteResult } from "./http.ts"

export const SELECTION_LIFETIME_MS = 15 * 60_000

export interface Selection<P> {
  readonly id: string
  readonly userId: string
  readonly expiresAtMs: number
  /** 1 for the first stage. */
  readonly stage: number
  readonly items: ReadonlyArray<SelectionItemSpec>
  /** What the download will be made of once every stage is chosen. */
  readonly pending: P
  /** Item ids chosen in earlier stages. */
  readonly chosen: ReadonlyArray<string>
  resolved: boolean
}

export class SelectionStore<P> {
  readonly #selections = new Map<string, Selection<P>>()
  readonly #lifetimeMs: number

  constructor(lifetimeMs: number = SELECTION_LIFETIME_MS) {
    this.#lifetimeMs = lifetimeMs
  }

  create(
    userId: string,
    pending: P,
    chosen: ReadonlyArray<string>,
    items: ReadonlyArray<SelectionItemSpec>,
    nowMs: number
  ): Selection<P> {
    const selection: Selection<P> = {
      id: `sel_${randomBytes(9).toString("base64url")}`,
      userId,
      expiresAtMs: nowMs + this.#lifetimeMs,
      stage: chosen.length + 1,
      items,
      pending,
      chosen,
      resolved: false
    }
    this.#selections.set(selection.id, selection)
    return selection
  }

  get(userId: string, id: string): Selection<P> | undefined {
    const selection = this.#selections.get(id)
    return selection?.userId === userId ? selection : undefined
  }

  /**
   * Validates a choice and resolves the selection; returns the choices so far including
   * this one, or the error answer.
   */
  choose(
    userId: string,
    id: string,
    itemId: unknown,
    nowMs: number
  ): { readonly selection: Selection<P>; readonly chosen: ReadonlyArray<string> } | { readonly error: RouteResult } {
    const selection = this.get(userId, id)
    if (selection === undefined) return { error: apiError(404, "not_found", "Selection not found") }
    if (typeof itemId !== "string" || itemId === "") {
      return { error: apiError(422, "validation_failed", "item_id is required", { item_id: ["is required"] }) }
    }
    if (selection.resolved) {
      return { error: apiError(409, "selection_resolved", "This selection has already been answered") }
    }
    if (nowMs >= selection.expiresAtMs) {
      return { error: apiError(409, "selection_expired", "This selection expired; create the download again") }
    }
    const item = selection.items.find((i) => i.item_id === itemId)
    if (item === undefined) {
      return {
        error: apiError(422, "validation_failed", "Unknown item_id", { item_id: ["is not an item of this selection"] })
      }
    }
    if (!item.selectable) {
      return { error: apiError(422, "validation_failed", "Item is not selectable", { item_id: ["is not selectable"] }) }
    }
    selection.resolved = true
    return { selection, chosen: [...selection.chosen, itemId] }
  }
}

/** The selection as the API shows it. */
export const selectionJson = <P>(selection: Selection<P>) => ({
  id: selection.id,
  expires_at: formatMicros(selection.expiresAtMs * 1000),
  stage: selection.stage,
  items: selection.items
})
