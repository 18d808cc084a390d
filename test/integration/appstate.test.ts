/**
 * Per-file progress in app state, end to end: the real CLI signed in with OAuth (a seeded
 * token file, as `dlsync login` leaves it) against the emulator, whose file states are read
 * back over HTTP as any other device would.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"
import { API_KEY_NOTICE } from "../../src/auth/credentialsFromConfig.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { seedTokens } from "../auth/support/fixtures.ts"
import {
  contentMismatches,
  eventually,
  expectedTree,
  freePort,
  type Sandbox,
  sandbox,
  seedSmallLibrary,
  snapshot,
  waitUntil
} from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

interface StateRead {
  readonly etag: string | undefined
  readonly value: Record<string, unknown> | null
}

/** GET /files/{id}/state with the emulator's OAuth token (the same app as dlsync). */
const readState = async (emu: RunningEmulator, fileId: string): Promise<StateRead> => {
  const res = await fetch(`${emu.baseUrl}/files/${fileId}/state`, {
    headers: { authorization: `Bearer ${emu.accessToken}` }
  })
  assert.strictEqual(res.status, 200, `GET state of ${fileId}`)
  const body = (await res.json()) as { data: { value: Record<string, unknown> } | null }
  return { etag: res.headers.get("etag") ?? undefined, value: body.data?.value ?? null }
}

/** The user agent of the test's own writes (told apart from dlsync's in the request log). */
const OTHER_WRITER = "another-device"

/** A conditional PUT, as another device of the same app writes; the status. */
const writeState = async (emu: RunningEmulator, fileId: string, value: unknown, etag: string | undefined) => {
  const res = await fetch(`${emu.baseUrl}/files/${fileId}/state`, {
    method: "PUT",
    headers: {
      authorization: `Bearer ${emu.accessToken}`,
      "content-type": "application/json",
      "user-agent": OTHER_WRITER,
      ...(etag === undefined ? { "if-none-match": "*" } : { "if-match": etag })
    },
    body: JSON.stringify({ value })
  })
  await res.arrayBuffer()
  return res.status
}

const deviceEntry = (read: StateRead, deviceId: string): Record<string, unknown> | undefined => {
  const section = read.value?.dlsync
  return typeof section === "object" && section !== null
    ? (Reflect.get(section, deviceId) as Record<string, unknown> | undefined)
    : undefined
}

/** The totals of this device's record in app storage, read back over HTTP. */
const readRecordTotals = async (emu: RunningEmulator, deviceId: string): Promise<unknown> => {
  const res = await fetch(`${emu.baseUrl}/app-storage/devices%2F${deviceId}`, {
    headers: { authorization: `Bearer ${emu.accessToken}` }
  })
  assert.strictEqual(res.status, 200, "GET the device record")
  const body = (await res.json()) as { data: { value: { totals?: unknown } } }
  return body.data.value.totals
}

/** Signs the CLI in with OAuth: the emulator's ready token pair in the state dir. */
const signIn = (b: Sandbox) => Effect.runPromise(seedTokens(b.emu, b.stateDir))

const deviceIdOf = (b: Sandbox) => Fs.readFileSync(Path.join(b.stateDir, "device-id"), "utf8").trim()

/** Every remote file with its mirror path. */
const remoteFiles = (emu: RunningEmulator) => {
  const tree = emu.state.primaryUser.tree
  return [...tree.values()]
    .filter((i) => i.type === "file")
    .map((i) => ({ id: i.id, path: tree.pathOf(i.id).join("/"), size: i.sizeBytes }))
}

const stateRequests = (emu: RunningEmulator, afterSeq?: number) =>
  emu.control.requests({ origin: "api", afterSeq }).filter((r) => /\/files\/[^/]+\/state/.test(r.path))

/** The outbox rows, read while the daemon holds the database (WAL allows it). */
const outboxStates = (stateDir: string): Array<string> => {
  const file = Path.join(stateDir, "state.db")
  if (!Fs.existsSync(file)) return []
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
  try {
    return db
      .prepare("SELECT entry FROM app_state_outbox")
      .all()
      .map((row) => String(JSON.parse(String(Reflect.get(Object(row), "entry"))).state))
  } catch {
    return []
  } finally {
    db.close()
  }
}

describe("app state", { timeout: 120_000 }, () => {
  it("with OAuth, run --once leaves every mirrored file complete in its state, locked and skipped ones so", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    const locked = b.emu.control.addFile({ name: "locked.mkv", parentId: null, sizeBytes: 500, locked: true })
    const huge = b.emu.control.addFile({ name: "huge.bin", parentId: null, sizeBytes: 90_000 })
    await signIn(b)
    const env = { DLSYNC_MIRROR_MAX_FILE_SIZE: "80000" }

    const result = await b.run(["run", "--once"], { env })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.notInclude(result.stdout + result.stderr, API_KEY_NOTICE)
    assert.deepStrictEqual(
      contentMismatches(b.emu, b.root).filter((p) => !p.startsWith("locked.mkv") && !p.startsWith("huge.bin")),
      []
    )

    const deviceId = deviceIdOf(b)
    for (const file of remoteFiles(b.emu)) {
      if (file.id === locked.id || file.id === huge.id) continue
      const entry = deviceEntry(await readState(b.emu, file.id), deviceId)
      assert.deepInclude(entry, { state: "complete", path: file.path, size: file.size, bytes: file.size, error: null })
    }
    const lockedEntry = deviceEntry(await readState(b.emu, locked.id), deviceId)
    assert.deepInclude(lockedEntry, { state: "locked", path: "locked.mkv", size: 500, bytes: 0 })
    const hugeEntry = deviceEntry(await readState(b.emu, huge.id), deviceId)
    assert.deepInclude(hugeEntry, {
      state: "skipped",
      path: "huge.bin",
      bytes: 0,
      error: "larger than mirror.max_file_size"
    })

    // The device record, and an idle second run writes nothing more to file states.
    const record = await fetch(`${b.emu.baseUrl}/app-storage/devices%2F${deviceId}`, {
      headers: { authorization: `Bearer ${b.emu.accessToken}` }
    })
    assert.strictEqual(record.status, 200)
    b.emu.control.clearRequests()
    const again = await b.run(["run", "--once"], { env })
    assert.strictEqual(again.code, 0, again.stderr)
    assert.sameMembers(
      stateRequests(b.emu).map((r) => `${r.method} ${r.path}`),
      [locked.id, huge.id].map((id) => `GET /api/v1/files/${id}/state`),
      "only the skipped files are reported again (a new process), and their unchanged entries are not rewritten"
    )
  })

  it("run --once writes the device record once, as it ends: its totals are the mirror's after the pass", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await signIn(b)
    const result = await b.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)

    const files = remoteFiles(b.emu)
    assert.deepStrictEqual(await readRecordTotals(b.emu, deviceIdOf(b)), {
      complete: files.length,
      failed: 0,
      bytes: files.reduce((sum, f) => sum + f.size, 0)
    })
    const recordPuts = b.emu.control
      .requests({ origin: "api" })
      .filter((r) => r.method === "PUT" && r.path.includes("/app-storage/"))
    assert.strictEqual(recordPuts.length, 1, "one write per short run: the final one")
  })

  it("keeps a concurrent writer's keys: set beforehand, and written mid-run (412, re-read, merge)", async () => {
    box = await sandbox()
    const b = box
    const big = b.emu.control.addFile({ name: "big.mkv", parentId: null, sizeBytes: 60_000 })
    const small = b.emu.control.addFile({ name: "small.txt", parentId: null, sizeBytes: 100 })
    // Set beforehand: another device's entry and another top-level key of the same app.
    const before = { dlsync: { "other-device": { state: "complete" } }, notes: { starred: true } }
    assert.strictEqual(await writeState(b.emu, big.id, before, undefined), 200)
    assert.strictEqual(await writeState(b.emu, small.id, before, undefined), 200)
    await signIn(b)
    b.emu.control.addFault({ kind: "slow", path: "/dl/**", probability: 1, bytesPerSecond: 12_000 })

    const startSeq = b.emu.control.requests().at(-1)?.seq ?? 0
    const run = b.spawn(["run", "--once"], { env: { DLSYNC_APP_STATE_PROGRESS_INTERVAL: "1s" }, deadlineMs: 90_000 })
    // While big.mkv downloads, a third device writes its entry (read-modify-write, retried on 412).
    let deviceId = ""
    await waitUntil(
      () => {
        if (!Fs.existsSync(Path.join(b.stateDir, "device-id"))) return false
        deviceId = deviceIdOf(b)
        return stateRequests(b.emu, startSeq).some(
          (r) =>
            r.method === "PUT" &&
            r.path.includes(big.id) &&
            r.status === 200 &&
            r.headers["user-agent"] !== OTHER_WRITER
        )
      },
      30_000,
      "dlsync's first write of big.mkv"
    )
    for (let written = false; !written; ) {
      const current = await readState(b.emu, big.id)
      const value = { ...current.value, dlsync: { ...(current.value?.dlsync as object), "third-device": { x: 1 } } }
      written = (await writeState(b.emu, big.id, value, current.etag)) === 200
    }
    const result = await run.exit
    assert.strictEqual(result.code, 0, result.stderr)

    const final = await readState(b.emu, big.id)
    assert.deepStrictEqual(final.value?.notes, { starred: true })
    const section = final.value?.dlsync as Record<string, unknown>
    assert.deepStrictEqual(section["other-device"], { state: "complete" })
    assert.deepStrictEqual(section["third-device"], { x: 1 })
    assert.deepInclude(deviceEntry(final, deviceId), { state: "complete", path: "big.mkv", size: 60_000 })
    const smallState = await readState(b.emu, small.id)
    assert.deepStrictEqual(smallState.value?.notes, { starred: true })
    assert.deepInclude(deviceEntry(smallState, deviceId), { state: "complete", path: "small.txt" })
    assert.isTrue(
      stateRequests(b.emu, startSeq).some(
        (r) =>
          r.method === "PUT" && r.path.includes(big.id) && r.status === 412 && r.headers["user-agent"] !== OTHER_WRITER
      ),
      "dlsync's write after the third device's met 412 and was merged"
    )
  })

  it("SIGKILL after the files landed: the final entries wait in the outbox and arrive after a restart", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await signIn(b)
    // The service refuses file state for now: nothing can be written during the first run.
    const fault = b.emu.control.addFault({ kind: "status_503", path: "/api/v1/files/*/state", probability: 1 })
    const files = remoteFiles(b.emu)
    const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1h" }, deadlineMs: 90_000 })
    await waitUntil(
      () => outboxStates(b.stateDir).filter((s) => s === "complete").length === files.length,
      45_000,
      "every file landed with its complete entry queued"
    )
    assert.deepStrictEqual(snapshot(b.root), expectedTree(b.emu))
    daemon.child.kill("SIGKILL")
    const killed = await daemon.exit
    assert.strictEqual(killed.signal, "SIGKILL")
    const deviceId = deviceIdOf(b)
    assert.isTrue(b.emu.control.removeFault(fault.id))
    for (const file of files) assert.isUndefined(deviceEntry(await readState(b.emu, file.id), deviceId))

    const restart = await b.run(["run", "--once"])
    assert.strictEqual(restart.code, 0, restart.stderr)
    for (const file of files) {
      assert.deepInclude(deviceEntry(await readState(b.emu, file.id), deviceId), {
        state: "complete",
        path: file.path,
        size: file.size
      })
    }
    assert.deepStrictEqual(outboxStates(b.stateDir), [])
  })

  it("run --once writes a long backlog for at most its bound, saying so, and leaves the rest in the outbox", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await signIn(b)
    const files = remoteFiles(b.emu)
    // One request per 10 s: the backlog (two requests per file) cannot be written within the bound.
    const started = performance.now()
    const result = await b.run(["run", "--once"], {
      env: { DLSYNC_APP_STATE_MAX_REQUESTS_PER_MINUTE: "6", DLSYNC_APP_STATE_ONCE_WAIT: "3s" },
      deadlineMs: 90_000
    })
    const tookMs = performance.now() - started
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(snapshot(b.root), expectedTree(b.emu))
    // The pass takes a second or two; the app-state wait after it is bounded by once_wait (3 s),
    // far below the 10 s one more request would take.
    assert.isBelow(tookMs, 3_000 + 15_000)
    assert.match(result.stderr, /after 3s the rest stays queued/)

    // Never silent: progress while waiting, then what was left and where.
    assert.match(result.stderr, /writing app state: \d+ of \d+ entries, about \S+ left/)
    assert.match(result.stderr, /the rest stays queued for the next run/)
    assert.match(result.stderr, /app state: \d+ entries not yet written stay queued for the next run/)

    // The rest is durable in the outbox, and `status` counts it.
    const queued = outboxStates(b.stateDir)
    assert.isAbove(queued.length, 0)
    assert.isBelow(queued.length, files.length + 1)
    const status = await b.run(["status", "--json"])
    assert.strictEqual(status.code, 0, status.stderr)
    assert.deepStrictEqual(JSON.parse(status.stdout).appState, { queued: queued.length })
    const human = await b.run(["status"])
    assert.include(human.stdout, `app state:       ${queued.length} entries queued`)

    // The next run (default budget) writes what was left.
    const next = await b.run(["run", "--once"])
    assert.strictEqual(next.code, 0, next.stderr)
    assert.deepStrictEqual(outboxStates(b.stateDir), [])
    const deviceId = deviceIdOf(b)
    for (const file of files) {
      assert.deepInclude(deviceEntry(await readState(b.emu, file.id), deviceId), { state: "complete", path: file.path })
    }
  })

  it("the daemon writes what is left on SIGTERM and still exits 0 within 10 s", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await signIn(b)
    // Refused while the files land: the writer backs off (5 s, then 10 s, …) with everything queued.
    const fault = b.emu.control.addFault({ kind: "status_503", path: "/api/v1/files/*/state", probability: 1 })
    const files = remoteFiles(b.emu)
    const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1h" }, deadlineMs: 90_000 })
    await waitUntil(
      () => outboxStates(b.stateDir).filter((s) => s === "complete").length === files.length,
      45_000,
      "every file landed with its complete entry queued"
    )
    b.emu.control.removeFault(fault.id)
    const stoppedAt = Date.now()
    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.isBelow(Date.now() - stoppedAt, 10_000)
    const deviceId = deviceIdOf(b)
    for (const file of files) {
      assert.deepInclude(deviceEntry(await readState(b.emu, file.id), deviceId), { state: "complete", path: file.path })
    }
    assert.deepStrictEqual(outboxStates(b.stateDir), [])
  })

  it("the daemon counts its app-state writes in /metrics", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    await signIn(b)
    const files = remoteFiles(b.emu)
    const port = await freePort()
    const daemon = b.spawn(["run"], {
      env: { DLSYNC_SYNC_POLL_INTERVAL: "1h", DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}` },
      deadlineMs: 90_000
    })
    const written = async () => {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
        (r) => r.text(),
        () => ""
      )
      const line = /^dlsync_app_state_writes_total\{outcome="written"\} (\d+)/m.exec(text)
      return line === null ? 0 : Number(line[1])
    }
    await eventually(async () => (await written()) >= files.length, "app-state writes counted", 45_000)
    assert.isAtLeast(await written(), files.length)
    daemon.child.kill("SIGTERM")
    assert.strictEqual((await daemon.exit).code, 0)
  })

  it("with a personal API key: the mirror works, app state is off with one notice, no state request", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    const result = await b.run(["run", "--once"], { apiKey: true })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(snapshot(b.root), expectedTree(b.emu))
    const output = result.stdout + result.stderr
    assert.strictEqual(output.split(API_KEY_NOTICE).length - 1, 1, output)
    const api = b.emu.control.requests({ origin: "api" })
    assert.deepStrictEqual(
      api.filter((r) => /\/state(\?|$)/.test(r.path) || r.path.includes("/app-storage")).map((r) => r.path),
      []
    )
    assert.isAbove(api.length, 0)
  })
})
