/**
 * The intake queue end to end: `dlsync add` records a release, the daemon (`dlsync run`)
 * sends it to the emulator, answers its selections, follows it and mirrors its files into
 * `<root>/<category>/` even where `[mirror]` filters would leave them out; the store's
 * record says completed only once every file is on disk.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { contentMismatches, type Sandbox, sandbox, snapshot, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
const daemons: Array<ReturnType<Sandbox["spawn"]>> = []
afterEach(async () => {
  for (const d of daemons.splice(0)) {
    if (d.child.exitCode === null) {
      d.child.kill("SIGTERM")
      await d.exit.catch(() => undefined)
    }
  }
  await box?.close()
  box = undefined
})

const HASH_A = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"

/** The emulator's downloads run in 0.1 + 0.3 + 0.1 s. */
const fastDownloads = async (b: Sandbox) => {
  const response = await fetch(`${b.emu.controlUrl}/downloads/timings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ processing_ms: 100, downloading_ms: 300, finalizing_ms: 100 })
  })
  assert.strictEqual(response.status, 204)
}

const writeConfig = (b: Sandbox, toml: string) => {
  const dir = Path.join(b.dir, "config", "dlsync")
  Fs.mkdirSync(dir, { recursive: true })
  Fs.writeFileSync(Path.join(dir, "config.toml"), toml)
}

interface IntakeRow {
  readonly id: string
  readonly name: string
  readonly phase: string
  readonly status: string | null
  readonly reason: string | null
  readonly download_id: string | null
  readonly completed_at: number | null
  readonly not_before: number | null
}

const intakes = (b: Sandbox): Array<IntakeRow> => {
  const file = Path.join(b.stateDir, "state.db")
  if (!Fs.existsSync(file)) return []
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
  try {
    db.pragma("busy_timeout = 5000")
    return db.prepare("SELECT * FROM intakes ORDER BY added_at, id").all() as Array<IntakeRow>
  } catch {
    return []
  } finally {
    db.close()
  }
}

const intake = (b: Sandbox, id: string) => intakes(b).find((r) => r.id === id)

const startDaemon = (b: Sandbox, env: Record<string, string> = {}) => {
  const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1s", ...env }, deadlineMs: 120_000 })
  daemons.push(daemon)
  return daemon
}

/** Files and folders below `rel` in the root. */
const below = (b: Sandbox, rel: string) =>
  Object.keys(snapshot(b.root))
    .filter((p) => p === rel || p.startsWith(`${rel}/`))
    .sort()

describe("dlsync add and the intake queue", { timeout: 120_000 }, () => {
  it("a magnet with two selection stages lands in its category folder, outside the mirror's filters", async () => {
    box = await sandbox()
    const b = box
    await fastDownloads(b)
    writeConfig(b, '[categories.tv]\nselection = "largest"\n')
    // The mirror's filters select another folder only: the intake's files come all the same.
    startDaemon(b, { DLSYNC_MIRROR_FOLDERS: "Movies" })

    const magnet = `magnet:?xt=urn:btih:${HASH_A}&dn=Show.stages&xl=500000&tr=udp%3A%2F%2Ft.example%3A80`
    const added = await b.run(["add", magnet, "--category", "tv"])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, new RegExp(`^added Show\\.stages \\(btih:${HASH_A}\\) to category tv$`, "m"))

    await waitUntil(() => intake(b, `btih:${HASH_A}`)?.completed_at != null, 60_000, "the intake completed")
    assert.deepStrictEqual(below(b, "tv"), ["tv", "tv/Show.stages", "tv/Show.stages/Show.stages.2160p.mkv"])
    assert.strictEqual(Fs.statSync(Path.join(b.root, "tv/Show.stages/Show.stages.2160p.mkv")).size, 500_000)
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])

    // Added again: the same item, no second download.
    const again = await b.run(["add", magnet, "--category", "tv"])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.match(
      again.stdout,
      /^already present: Show\.stages \(btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a\) in category tv, completed$/m
    )
    assert.strictEqual(
      b.emu.control.requests({ origin: "api" }).filter((r) => r.method === "POST" && r.path === "/api/v1/downloads")
        .length,
      1
    )
  })
})
