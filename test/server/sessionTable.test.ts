/** Sessions: live while used, ended after their idle time, the least recently used one ended beyond the cap. */
import { assert, describe, it } from "@effect/vitest"
import { makeSessionTable } from "../../src/server/sessionTable.ts"

describe("sessionTable", () => {
  it("keeps a session alive while used, ends it once idle too long", () => {
    const table = makeSessionTable<string>({ idleMs: 1000, max: 10 })
    const sid = table.open(0, "csrf-1")
    assert.match(sid, /^[A-Za-z0-9_-]{32}$/)
    assert.strictEqual(table.use(sid, 900), "csrf-1")
    assert.strictEqual(table.use(sid, 1800), "csrf-1", "each use keeps it alive")
    assert.isUndefined(table.use(sid, 2801))
    assert.isUndefined(table.use(sid, 2802), "ended for good")
    assert.isUndefined(table.use(undefined, 0))
    assert.isUndefined(table.use("guessed", 0))
  })

  it("ends the least recently used session beyond the cap, and one closed", () => {
    const table = makeSessionTable<number>({ idleMs: 1000, max: 2 })
    const a = table.open(0, 1)
    const b = table.open(1, 2)
    table.use(a, 2)
    const c = table.open(3, 3)
    assert.strictEqual(table.use(a, 4), 1)
    assert.isUndefined(table.use(b, 4), "b was the least recently used")
    assert.strictEqual(table.use(c, 4), 3)
    table.close(c)
    assert.isUndefined(table.use(c, 5))
  })
})
