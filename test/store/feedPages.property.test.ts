/**
 * Property: for random change logs, any page split, any harmless repetition of records, any
 * page applied twice (a crash before the next page), and a reopen of the database between
 * pages, the store ends with exactly the items of the pure fold `applyChanges`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { applyChanges, type RemoteChange, type RemoteItem, remove, upsert } from "../../src/domain/RemoteItem.ts"
import { Store } from "../../src/store/Store.ts"
import { fid, file, folder } from "../sync/fixtures.ts"
import { runWithStore, tempDir } from "./helpers.ts"

const IDS = ["a", "b", "c", "d", "e", "f"]

const change: fc.Arbitrary<RemoteChange> = fc.oneof(
  fc
    .record({
      id: fc.constantFrom(...IDS),
      name: fc.string({ maxLength: 6 }),
      parent: fc.option(fc.constantFrom(...IDS), { nil: null }),
      isFolder: fc.boolean(),
      size: fc.nat(1000)
    })
    .map(({ id, name, parent, isFolder, size }) =>
      upsert(isFolder ? folder(id, name, parent) : file(id, name, parent, { size }))
    ),
  fc.constantFrom(...IDS).map((id) => remove(fid(id)))
)

/** A log, with some records repeated later (before the next record for the same id). */
const logWithRepeats = fc
  .record({
    log: fc.array(change, { maxLength: 30 }),
    repeats: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 8 })
  })
  .map(({ log, repeats }) => {
    const out = [...log]
    for (const [i, offset] of repeats) {
      if (out.length === 0) break
      const at = i % out.length
      const record = out[at]!
      const id = record._tag === "Upsert" ? record.item.id : record.id
      let end = at + 1
      while (end < out.length && idOf(out[end]!) !== id) end++
      out.splice(at + 1 + (offset % (end - at)), 0, record)
    }
    return { log, withRepeats: out }
  })

const idOf = (c: RemoteChange) => (c._tag === "Upsert" ? c.item.id : c.id)

const split = <A>(items: ReadonlyArray<A>, cuts: ReadonlyArray<number>): Array<Array<A>> => {
  const points = [...new Set(cuts.map((c) => c % (items.length + 1)))].sort((a, b) => a - b)
  const pages: Array<Array<A>> = []
  let from = 0
  for (const p of [...points, items.length]) {
    pages.push(items.slice(from, p))
    from = p
  }
  return pages
}

const sorted = (items: Iterable<RemoteItem>) => [...items].sort((a, b) => (a.id < b.id ? -1 : 1))

describe("feed pages (property)", () => {
  it("any split, repetition, re-application and reopen gives the fold's result", () => {
    fc.assert(
      fc.property(
        logWithRepeats,
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.nat(),
        ({ log, withRepeats }, cuts, replayed) => {
          const dir = tempDir("dlsync-prop-")
          const pages = split(withRepeats, cuts)
          const replay = replayed % pages.length
          pages.forEach((changes, i) => {
            const page = { changes, nextCursor: `c${i}`, hasMore: i < pages.length - 1 }
            // Each page on a fresh connection: a restart between pages.
            runWithStore(
              dir,
              Store.use((s) => s.feed.applyPage(page))
            )
            if (i === replay && page.hasMore)
              runWithStore(
                dir,
                Store.use((s) => s.feed.applyPage(page))
              )
          })
          const stored = runWithStore(
            dir,
            Store.use((s) => s.remote.all)
          )
          const state = runWithStore(
            dir,
            Store.use((s) => s.feed.state)
          )
          assert.deepStrictEqual(sorted(stored), sorted(applyChanges(new Map(), log).values()))
          assert.strictEqual(state.cursor, `c${pages.length - 1}`)
          assert.isTrue(state.listingComplete)
        }
      ),
      { numRuns: 15 }
    )
  })

  it("a rebuild, interrupted and restarted at any page, ends with exactly the last listing", () => {
    const items = fc.uniqueArray(
      fc
        .record({ id: fc.constantFrom(...IDS), name: fc.string({ maxLength: 4 }) })
        .map(({ id, name }) => file(id, name)),
      { selector: (i) => i.id, maxLength: IDS.length }
    )
    fc.assert(
      fc.property(
        items,
        items,
        items,
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.nat(),
        (before, abandoned, after, cuts, at) => {
          const dir = tempDir("dlsync-prop-")
          runWithStore(
            dir,
            Store.use((s) => s.feed.applyPage({ changes: before.map(upsert), nextCursor: "live", hasMore: false }))
          )
          runWithStore(
            dir,
            Store.use((s) => s.feed.rebuild("cursor_expired"))
          )
          // A partial listing of some other state, abandoned (410 mid-listing)...
          const partial = abandoned.slice(0, at % (abandoned.length + 1))
          runWithStore(
            dir,
            Store.use((s) => s.feed.applyPage({ changes: partial.map(upsert), nextCursor: "L", hasMore: true }))
          )
          assert.isFalse(
            runWithStore(
              dir,
              Store.use((s) => s.feed.state)
            ).listingComplete
          )
          runWithStore(
            dir,
            Store.use((s) => s.feed.rebuild("cursor_expired mid-listing"))
          )
          // ...then the full listing of the final state, in pages.
          const pages = split(after.map(upsert), cuts)
          pages.forEach((changes, i) => {
            runWithStore(
              dir,
              Store.use((s) => s.feed.applyPage({ changes, nextCursor: `n${i}`, hasMore: i < pages.length - 1 }))
            )
          })
          assert.deepStrictEqual(
            sorted(
              runWithStore(
                dir,
                Store.use((s) => s.remote.all)
              )
            ),
            sorted(after)
          )
        }
      ),
      { numRuns: 15 }
    )
  })
})
