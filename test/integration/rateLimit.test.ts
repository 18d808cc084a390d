/**
 * A 429 is the account's rate limit: the real CLI, transferring several files at once,
 * gets one 429 with Retry-After on a download-link request, and from then on no link
 * request of any file reaches the emulator until Retry-After has passed (read from the
 * emulator's request log, on its clock).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { contentMismatches, type Sandbox, sandbox, seedMany } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

const RETRY_AFTER_SECONDS = 2
/**
 * Requests already on the wire when the 429 was answered may arrive just after it: the
 * client cannot hold back what it sent before it heard of the limit.
 */
const IN_FLIGHT_MS = 250

describe("rate limit", { timeout: 120_000 }, () => {
  it("one 429 with Retry-After on a link request holds every file's link request for that long", async () => {
    box = await sandbox()
    const b = box
    seedMany(b.emu, "many", 24, 2_000)
    // Half a second per file, so the link requests of later files fall inside the window.
    b.emu.control.addFault({ kind: "slow", path: "/dl/**", probability: 1, bytesPerSecond: 4_000 })
    b.emu.control.addFault({
      kind: "status_429",
      method: "POST",
      path: "/api/v1/files/*/download-link",
      count: 1,
      retryAfterSeconds: RETRY_AFTER_SECONDS
    })
    const result = await b.run(["run", "--once"], {
      apiKey: true,
      env: { DLSYNC_TRANSFERS_CONCURRENCY: "8", DLSYNC_LOG_LEVEL: "info" }
    })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])

    const links = b.emu.control.requests({ origin: "api" }).filter((r) => r.path.endsWith("/download-link"))
    const limited = links.find((r) => r.status === 429) ?? assert.fail("the fault never fired")
    const inWindow = links.filter(
      (r) => r.at > limited.at + IN_FLIGHT_MS && r.at < limited.at + RETRY_AFTER_SECONDS * 1_000
    )
    assert.deepStrictEqual(
      inWindow.map((r) => `${r.path} ${r.at - limited.at} ms after the 429`),
      [],
      "link requests inside the Retry-After window"
    )
    assert.strictEqual(links.filter((r) => r.status === 200).length, 24, "every file got its link, once")
    assert.include(result.stdout + result.stderr, "rate limited")
  })

  it("run --once: a Retry-After longer than a pass waits ends it with 75 and one line; no file fails, the next run finishes", async () => {
    box = await sandbox()
    const b = box
    seedMany(b.emu, "many", 4, 2_000)
    const fault = b.emu.control.addFault({
      kind: "status_429",
      method: "POST",
      path: "/api/v1/files/*/download-link",
      count: 1_000,
      retryAfterSeconds: 600
    })
    const limited = await b.run(["run", "--once"], { apiKey: true })
    assert.strictEqual(limited.code, 75, limited.stderr)
    const reasons = limited.stderr.split("\n").filter((l) => l.startsWith("dlsync: "))
    assert.strictEqual(reasons.length, 1, limited.stderr)
    assert.match(
      reasons[0] ?? "",
      /rate limit holds download links until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, longer than one run --once waits/
    )
    assert.notInclude(limited.stderr, "failed:")
    assert.notInclude(limited.stderr, "parked")

    b.emu.control.removeFault(fault.id)
    const next = await b.run(["run", "--once"], { apiKey: true })
    assert.strictEqual(next.code, 0, next.stderr)
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
  })
})
