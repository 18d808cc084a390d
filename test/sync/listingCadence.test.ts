/**
 * The full-listing cadence of listing mode: properties over listing costs, poll intervals,
 * bounds and budgets, and the examples the README quotes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  type CadenceInput,
  fullListingInterval,
  isFullListingDue,
  LISTING_REQUESTS_PER_HOUR,
  listingCostOf
} from "../../src/sync/listingCadence.ts"

const MINUTE = 60_000
const HOUR = 60 * MINUTE

const input = fc.record({
  items: fc.nat(2_000_000),
  pollInterval: fc.integer({ min: 1_000, max: 6 * HOUR }),
  maxInterval: fc.integer({ min: 1_000, max: 7 * 24 * HOUR }),
  requestsPerHour: fc.integer({ min: 1, max: 10_000 })
})

const cadence = (i: { items: number; pollInterval: number; maxInterval: number; requestsPerHour: number }) => {
  const cadenceInput: CadenceInput = { ...i, cost: listingCostOf(i.items) }
  return { cadenceInput, interval: fullListingInterval(cadenceInput) }
}

describe("fullListingInterval", () => {
  it("is a whole number of polls, at least one, and at most listing_interval", () => {
    fc.assert(
      fc.property(input, (i) => {
        const { interval } = cadence(i)
        const polls = interval / i.pollInterval
        assert.isTrue(Number.isInteger(polls) && polls >= 1, `${polls} polls`)
        assert.isAtMost(interval, Math.max(i.pollInterval, i.maxInterval))
      })
    )
  })

  it("below listing_interval, spends at most the budget, with the fewest polls that do", () => {
    fc.assert(
      fc.property(input, (i) => {
        const { cadenceInput, interval } = cadence(i)
        const bound = Math.max(1, Math.floor(i.maxInterval / i.pollInterval)) * i.pollInterval
        if (interval === bound) return
        // A full listing replaces a poll: its first request is not extra.
        const spend = (ms: number) => (cadenceInput.cost.requests - 1) * HOUR <= i.requestsPerHour * ms
        assert.isTrue(spend(interval), "within the budget")
        if (interval > i.pollInterval) assert.isFalse(spend(interval - i.pollInterval), "no shorter interval fits")
      })
    )
  })

  it("never lists more often for a listing that costs more", () => {
    fc.assert(
      fc.property(input, fc.nat(1_000_000), (i, more) => {
        assert.isAtLeast(cadence({ ...i, items: i.items + more }).interval, cadence(i).interval)
      })
    )
  })

  it("lists a small account at every poll and a large one less often, up to listing_interval", () => {
    const at = (items: number) =>
      fullListingInterval({
        cost: listingCostOf(items),
        pollInterval: MINUTE,
        maxInterval: HOUR,
        requestsPerHour: LISTING_REQUESTS_PER_HOUR
      })
    assert.strictEqual(at(0), MINUTE)
    assert.strictEqual(at(200), MINUTE)
    assert.strictEqual(at(400), 2 * MINUTE)
    assert.strictEqual(at(1_000), 5 * MINUTE)
    assert.strictEqual(at(10_000), 50 * MINUTE)
    assert.strictEqual(at(100_000), HOUR)
  })
})

describe("isFullListingDue", () => {
  it("lets a poll that comes early by the jitter list", () => {
    assert.isTrue(isFullListingDue(0.9 * MINUTE, MINUTE, MINUTE, 0.1))
    assert.isFalse(isFullListingDue(0.85 * MINUTE, MINUTE, MINUTE, 0.1))
    assert.isTrue(isFullListingDue(5 * MINUTE, 5 * MINUTE, MINUTE, 0.1))
    assert.isFalse(isFullListingDue(4 * MINUTE, 5 * MINUTE, MINUTE, 0.1))
  })
})
