/**
 * How the page writes counts (web/format.ts): grouped by three from five digits on, with a
 * narrow no-break space, whatever the locale.
 */
import { assert, describe, it } from "@effect/vitest"
import { formatCount } from "../../web/format.ts"

describe("the page's counts", () => {
  it("groups five digits and more by three, with a narrow no-break space", () => {
    assert.deepStrictEqual([0, 7, 9999, 10_000, 123_456, 1_234_567, -98_765].map(formatCount), [
      "0",
      "7",
      "9999",
      "10\u202f000",
      "123\u202f456",
      "1\u202f234\u202f567",
      "-98\u202f765"
    ])
  })
})
