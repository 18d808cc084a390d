/**
 * How often listing mode makes a full listing, the only way it sees remote deletions (a
 * personal API key cannot read the change feed). Pure: the daemon and `status` share it.
 *
 * The cadence follows the cost of the previous listing: the requests it takes beyond the one
 * a poll takes anyway (a full listing replaces that poll), spent at no more than
 * LISTING_REQUESTS_PER_HOUR. An account that lists in one request is listed at every poll; a
 * large one less often; never less often than `sync.listing_interval`, the upper bound the
 * user configured (the bound wins over the budget: the user asked for that latency).
 *
 * Invariants (property-tested):
 * - the interval is a whole number of poll intervals, at least one;
 * - it is at most `listing_interval` (rounded down to whole polls, at least one poll);
 * - below that bound, listings spend at most the budget: extra requests per interval ≤ the
 *   budget's share of it, and the interval is the fewest polls that keep within it;
 * - a listing that costs more never makes the interval shorter.
 */
import { PAGE_LIMIT } from "./feed.ts"

/**
 * Requests per hour full listings may spend beyond the polls they replace: 2 a minute,
 * 12,000 items an hour at 100 a page.
 */
export const LISTING_REQUESTS_PER_HOUR = 120

/** What the previous full listing cost. */
export interface ListingCost {
  readonly items: number
  readonly requests: number
}

/** A full listing of `items` remote items: one request per page of PAGE_LIMIT, at least one. */
export const listingCostOf = (items: number): ListingCost => ({
  items,
  requests: Math.max(1, Math.ceil(items / PAGE_LIMIT))
})

export interface CadenceInput {
  readonly cost: ListingCost
  /** Milliseconds between polls (`sync.poll_interval`). */
  readonly pollInterval: number
  /** Milliseconds: the longest time between full listings (`sync.listing_interval`). */
  readonly maxInterval: number
  readonly requestsPerHour: number
}

/** Milliseconds between full listings: a whole number of polls (see the invariants above). */
export const fullListingInterval = (input: CadenceInput): number => {
  const { cost, pollInterval, maxInterval, requestsPerHour } = input
  const extra = Math.max(0, cost.requests - 1)
  const affordable = Math.ceil((extra * HOUR) / (requestsPerHour * pollInterval))
  const bound = Math.max(1, Math.floor(maxInterval / pollInterval))
  return Math.min(Math.max(1, affordable), bound) * pollInterval
}

/**
 * Whether the poll at `elapsed` milliseconds after the last full listing is the one to list
 * at. Polls are jittered ±`jitter` (a fraction), so one may come that much early.
 */
export const isFullListingDue = (elapsed: number, interval: number, pollInterval: number, jitter: number): boolean =>
  elapsed >= interval - pollInterval * jitter

// ---------------------------------------------------------------------------------------

const HOUR = 3_600_000
