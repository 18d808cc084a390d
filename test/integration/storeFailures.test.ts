/**
 * A state dir on a full disk and a damaged state database: one line saying what to do and
 * the documented exit code (75 temporary, 78 needs the owner), never a stack trace; the
 * damaged file is kept, and moving it aside lets dlsync re-adopt the mirror without
 * downloading. The full disk is a real small tmpfs (the tests run as root).
 * And `run --once` on a mirror disk without `transfers.min_free_space` to spare exits 75
 * at once, saying how much is needed where, instead of waiting for room.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliResult, eventually, freePort, type Sandbox, sandbox, seedMany, seedSmallLibrary } from "./harness.ts"

let box: Sandbox | undefined
const mounts: Array<string> = []
afterEach(async () => {
  for (const dir of mounts.splice(0)) execFileSync("umount", [dir])
  await box?.close()
  box = undefined
})

/** A tmpfs of `size` at a new folder under the sandbox; unmounted after the test. */
const smallDisk = (b: Sandbox, size: string): string => {
  const dir = Path.join(b.dir, "small")
  Fs.mkdirSync(dir)
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir])
  mounts.push(dir)
  return dir
}

/** Fills the file system of `dir` to the last byte. */
const fill = (dir: string): void => {
  const fd = Fs.openSync(Path.join(dir, "filler"), "w")
  const block = Buffer.alloc(4096, 1)
  try {
    for (;;) Fs.writeSync(fd, block)
  } catch (e) {
    if (!(e instanceof Error && "code" in e && e.code === "ENOSPC")) throw e
  } finally {
    Fs.closeSync(fd)
  }
}

/** One line beside the log's JSON lines, and no stack trace. */
const assertOneLine = (result: CliResult, pattern: RegExp) => {
  const lines = result.stderr
    .trim()
    .split("\n")
    .filter((line) => !line.startsWith("{"))
  assert.lengthOf(lines, 1, result.stderr)
  assert.match(lines[0] ?? "", pattern)
  assert.notMatch(result.stderr, /SqliteError|\n\s+at /)
}

// 512 KiB: room for a fresh store (its write-ahead log holds the migrations until the first
// checkpoint, about 320 KiB) but not for the 3,000 items the first poll records.
describe("store failures", () => {
  it("a state dir on a disk that fills while the store grows: 75 and one line", { timeout: 120_000 }, async () => {
    box = await sandbox()
    const b = box
    seedMany(b.emu, "many", 3000)
    const stateDir = Path.join(smallDisk(b, "512k"), "state")
    const result = await b.run(["run", "--once"], { stateDir, deadlineMs: 90_000 })
    assert.strictEqual(result.code, 75, result.stderr)
    assertOneLine(result, /^dlsync: the disk of the state dir .* is full: free some space there/)
  })

  it("the daemon waits out a full state disk and goes on once there is room", { timeout: 120_000 }, async () => {
    box = await sandbox()
    const b = box
    seedMany(b.emu, "many", 3000)
    const disk = smallDisk(b, "512k")
    const stateDir = Path.join(disk, "state")
    const daemon = b.spawn(["run"], { stateDir, env: { DLSYNC_SYNC_POLL_INTERVAL: "1h" }, deadlineMs: 100_000 })
    await eventually(
      async () => /the disk of the state dir .* is full.*retrying at the next poll/.test(daemon.output().stderr),
      "the daemon says the state disk is full",
      45_000,
      () => daemon.output().stderr
    )
    assert.isNull(daemon.child.exitCode, "the daemon keeps running")
    execFileSync("mount", ["-o", "remount,size=64m", disk])
    daemon.child.kill("SIGHUP")
    await eventually(
      async () => Fs.existsSync(Path.join(b.root, "many")) && Fs.readdirSync(Path.join(b.root, "many")).length === 3000,
      "the mirror once there is room",
      60_000,
      () => daemon.output().stderr.slice(-2000)
    )
    daemon.child.kill("SIGTERM")
    assert.strictEqual((await daemon.exit).code, 0)
  })

  it("no room even for the lock file: 75 (temporary), not 78", { timeout: 60_000 }, async () => {
    box = await sandbox()
    const b = box
    const disk = smallDisk(b, "64k")
    const stateDir = Path.join(disk, "state")
    Fs.mkdirSync(stateDir)
    fill(disk)
    const result = await b.run(["run", "--once"], { stateDir })
    assert.strictEqual(result.code, 75, result.stderr)
    assertOneLine(result, /^dlsync: the disk of the state dir .* is full/)
  })

  it("a state dir where no folder can be made (under /proc): 78 and one line, not a hang", {
    timeout: 60_000
  }, async () => {
    box = await sandbox()
    const result = await box.run(["run", "--once"], { stateDir: "/proc/nonexistent/state", deadlineMs: 15_000 })
    assert.strictEqual(result.code, 78, result.stderr)
    assertOneLine(result, /^dlsync: cannot open the state database \/proc\/nonexistent\/state.*ENOENT/)
  })

  it("garbage pages in the middle of state.db: 78, one line, the file kept; moved aside, dlsync re-adopts", {
    timeout: 120_000
  }, async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    seedMany(b.emu, "many", 400)
    assert.strictEqual((await b.run(["run", "--once"], { deadlineMs: 90_000 })).code, 0)
    const database = Path.join(b.stateDir, "state.db")
    const size = Fs.statSync(database).size
    const pages = size / 4096
    assert.isAbove(pages, 20, "a database of a few dozen pages")
    const fd = Fs.openSync(database, "r+")
    const middle = Math.floor(pages / 2)
    Fs.writeSync(fd, Buffer.alloc(3 * 4096, 0xa5), 0, 3 * 4096, middle * 4096)
    Fs.closeSync(fd)

    b.emu.control.addFile({ name: "later.txt", sizeBytes: 10 })
    const result = await b.run(["run", "--once"], { deadlineMs: 60_000 })
    assert.strictEqual(result.code, 78, result.stderr)
    assertOneLine(result, /^dlsync: the state database .*state\.db is damaged \(.*\): move it aside/)
    assert.isTrue(Fs.existsSync(database), "the damaged file is kept where it is")

    Fs.renameSync(database, `${database}.broken`)
    for (const suffix of ["-wal", "-shm"]) Fs.rmSync(database + suffix, { force: true })
    const again = await b.run(["run", "--once"], { deadlineMs: 90_000 })
    assert.strictEqual(again.code, 0, again.stderr)
    assert.isTrue(Fs.existsSync(Path.join(b.root, "later.txt")))
  })
})

describe("disk space for downloads", () => {
  it("run --once with less room than min_free_space: 75 with one line saying how much is needed where", {
    timeout: 60_000
  }, async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    const root = Path.join(smallDisk(b, "20m"), "root")
    Fs.mkdirSync(root)
    const result = await b.run(["run", "--once"], {
      root,
      env: { DLSYNC_TRANSFERS_MIN_FREE_SPACE: "1 GiB" },
      deadlineMs: 45_000
    })
    assert.strictEqual(result.code, 75, result.stderr)
    const lines = result.stderr.split("\n").filter((line) => line.startsWith("dlsync:"))
    assert.lengthOf(lines, 1, result.stderr)
    assert.match(
      lines[0] ?? "",
      /^dlsync: not enough free space for the downloads in .*\/small\/root: 1\.0 GiB needed \(the file and transfers\.min_free_space = 1\.0 GiB\), \d+\.\d MiB free; free some space or lower transfers\.min_free_space$/
    )
    assert.notMatch(result.stderr, /\n\s+at /)
  })

  it("the daemon waits for room, and status and /readyz say it is paused for space", { timeout: 90_000 }, async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    const root = Path.join(smallDisk(b, "20m"), "root")
    Fs.mkdirSync(root)
    const port = await freePort()
    const daemon = b.spawn(["run"], {
      root,
      env: { DLSYNC_TRANSFERS_MIN_FREE_SPACE: "1 GiB", DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}` },
      deadlineMs: 80_000
    })
    const readyz = async () => {
      const reply = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined)
      // Until its routes are built the server answers 503 in plain text ("not serving yet").
      if (reply === undefined || !reply.headers.get("content-type")?.includes("json")) return undefined
      return { status: reply.status, report: JSON.parse(await reply.text()) }
    }
    await eventually(
      async () => (await readyz())?.report.checks.space.ok === false,
      "/readyz: paused for space",
      45_000,
      () => daemon.output().stderr
    )
    const reply = await readyz()
    assert.strictEqual(reply?.status, 503)
    assert.match(reply?.report.checks.space.detail, /^transfers paused: \d+ file\(s\) wait for free disk space/)
    await eventually(
      async () => JSON.parse((await b.run(["status", "--json"], { root })).stdout).transfers.waitingForSpace > 0,
      "status: waiting for space",
      15_000
    )
    assert.match(
      (await b.run(["status"], { root })).stdout,
      /transfers: +PAUSED: \d+ file\(s\) wait for free disk space/
    )
    assert.isNull(daemon.child.exitCode, "the daemon keeps running")
    daemon.child.kill("SIGTERM")
    await daemon.exit
  })
})
