/**
 * Remote cleanup through the real CLI against the emulator: files verified on disk for
 * `cleanup.after` in a configured folder are deleted on the service and stay on disk (and
 * out of the trash) in the passes after; files outside the folders, too young or changed
 * locally stay on the service; resource_locked is retried; a cleanup over the big-delete
 * gate is held like a local one and released by --allow-big-delete; a SIGKILL while the
 * POST /files/delete is answered loses no local file and causes no double-delete error.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliResult, type Sandbox, sandbox, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

const seed = (b: Sandbox) => {
  const movies = b.emu.control.addFolder({ name: "Movies", parentId: null })
  const tv = b.emu.control.addFolder({ name: "TV", parentId: null })
  const add = (parentId: string, name: string) => b.emu.control.addFile({ name, parentId, sizeBytes: 1024 }).id
  return {
    alpha: add(movies.id, "alpha.mkv"),
    beta: add(movies.id, "beta.mkv"),
    gamma: add(movies.id, "gamma.mkv"),
    show: add(tv.id, "show.mkv")
  }
}

const CLEANUP = { DLSYNC_CLEANUP_AFTER: "1s", DLSYNC_CLEANUP_FOLDERS: "Movies" }

const onService = (b: Sandbox, id: string) => b.emu.control.item(id) !== undefined
const deletePosts = (b: Sandbox) =>
  b.emu.control.requests().filter((r) => r.method === "POST" && r.path.startsWith("/api/v1/files/delete"))
const trashed = (b: Sandbox): Array<string> => {
  const trash = Path.join(b.root, ".dlsync/trash")
  return Fs.existsSync(trash) ? Fs.readdirSync(trash, { recursive: true }).map(String) : []
}

/** `run --once` again until `done` holds (cleanup.after is counted in real time, by the CLI's clock). */
const runUntil = async (b: Sandbox, env: Record<string, string>, done: () => boolean, args = ["run", "--once"]) => {
  let last: CliResult | undefined
  for (let i = 0; i < 20 && !done(); i++) {
    last = await b.run(args, { env })
  }
  assert.isTrue(done(), `never happened\n${last?.stderr ?? ""}`)
  return last
}

describe("remote cleanup", { timeout: 180_000 }, () => {
  it("deletes verified old files of the configured folders on the service and keeps them on disk", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const first = await b.run(["run", "--once"], { env: CLEANUP })
    assert.strictEqual(first.code, 0, first.stderr)
    // Changed locally: no longer verified, so never cleaned up.
    Fs.appendFileSync(Path.join(b.root, "Movies/beta.mkv"), "mine")

    await runUntil(b, CLEANUP, () => !onService(b, ids.alpha) && !onService(b, ids.gamma))
    assert.isTrue(onService(b, ids.beta), "changed locally: stays on the service")
    assert.isTrue(onService(b, ids.show), "outside the folders: stays on the service")

    // The passes after see the deletions in the feed and keep the local copies.
    for (let i = 0; i < 2; i++) {
      const next = await b.run(["run", "--once"], { env: CLEANUP })
      assert.strictEqual(next.code, 0, next.stderr)
    }
    for (const name of ["alpha.mkv", "beta.mkv", "gamma.mkv"]) {
      assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies", name)), `${name} stays on disk`)
    }
    assert.isTrue(Fs.existsSync(Path.join(b.root, "TV/show.mkv")))
    assert.deepStrictEqual(trashed(b), [], "nothing went to the trash")
    const status = JSON.parse((await b.run(["status", "--json"], { env: CLEANUP })).stdout)
    assert.isNull(status.heldDelete)
  })

  it("leaves files younger than cleanup.after on the service", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { ...CLEANUP, DLSYNC_CLEANUP_AFTER: "1h" }
    for (let i = 0; i < 2; i++) {
      const run = await b.run(["run", "--once"], { env })
      assert.strictEqual(run.code, 0, run.stderr)
    }
    assert.isTrue(Object.values(ids).every((id) => onService(b, id)))
    assert.strictEqual(deletePosts(b).length, 0)
  })

  it("retries a file the service reports locked (resource_locked)", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const first = await b.run(["run", "--once"], { env: CLEANUP })
    assert.strictEqual(first.code, 0, first.stderr)
    b.emu.control.lock(ids.alpha)
    await runUntil(b, CLEANUP, () => !onService(b, ids.gamma))
    assert.isTrue(onService(b, ids.alpha), "locked: not deleted")
    b.emu.control.unlock(ids.alpha)
    await runUntil(b, CLEANUP, () => !onService(b, ids.alpha))
    const last = await b.run(["run", "--once"], { env: CLEANUP })
    assert.strictEqual(last.code, 0, last.stderr)
    assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies/alpha.mkv")))
  })

  it("holds a cleanup over the big-delete gate like a local one; --allow-big-delete releases it", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { ...CLEANUP, DLSYNC_MIRROR_MAX_DELETE: "2" }
    const first = await b.run(["run", "--once"], { env })
    assert.strictEqual(first.code, 0, first.stderr)
    // cleanup.after runs in real time: the runs go on until one holds the cleanup.
    let heldRun = await b.run(["run", "--once"], { env })
    for (let i = 0; i < 20 && heldRun.code === 0; i++) heldRun = await b.run(["run", "--once"], { env })
    assert.strictEqual(heldRun.code, 1, heldRun.stderr)
    assert.match(heldRun.stderr, /remote cleanup held/)
    assert.isTrue(
      Object.values(ids).every((id) => onService(b, id)),
      "held: nothing deleted on the service"
    )
    const status = JSON.parse((await b.run(["status", "--json"], { env })).stdout)
    assert.deepStrictEqual(status.heldDelete.paths, ["Movies/alpha.mkv", "Movies/beta.mkv", "Movies/gamma.mkv"])

    const released = await b.run(["run", "--once", "--allow-big-delete"], { env })
    assert.strictEqual(released.code, 0, released.stderr)
    assert.isFalse(onService(b, ids.alpha) || onService(b, ids.beta) || onService(b, ids.gamma))
    assert.isTrue(onService(b, ids.show))
    const after = await b.run(["run", "--once"], { env })
    assert.strictEqual(after.code, 0, after.stderr)
    for (const name of ["alpha.mkv", "beta.mkv", "gamma.mkv"])
      assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies", name)))
    assert.deepStrictEqual(trashed(b), [])
  })

  it("a SIGKILL while POST /files/delete is answered loses no local file and causes no double-delete error", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const first = await b.run(["run", "--once"], { env: CLEANUP })
    assert.strictEqual(first.code, 0, first.stderr)
    // The service deletes, then its answer crawls: the CLI is killed before it records it.
    b.emu.control.addFault({ kind: "slow", path: "/api/v1/files/delete", method: "POST", bytesPerSecond: 1, count: 1 })
    let killed = false
    for (let i = 0; i < 20 && !killed; i++) {
      const child = b.spawn(["run", "--once"], { env: CLEANUP })
      const exited = child.exit.then(() => true)
      const posted = waitUntil(() => deletePosts(b).length > 0, 20_000).then(() => false)
      if (await Promise.race([exited, posted])) continue
      await waitUntil(() => !onService(b, ids.alpha))
      child.child.kill("SIGKILL")
      const exit = await child.exit
      assert.strictEqual(exit.signal, "SIGKILL")
      killed = true
    }
    assert.isTrue(killed, "the cleanup POST was never sent")
    b.emu.control.clearFaults()
    const again = await b.run(["run", "--once"], { env: CLEANUP })
    assert.strictEqual(again.code, 0, again.stderr)
    assert.notMatch(again.stderr, /remote cleanup: .*(answered|failed)/)
    const last = await b.run(["run", "--once"], { env: CLEANUP })
    assert.strictEqual(last.code, 0, last.stderr)
    for (const name of ["alpha.mkv", "beta.mkv", "gamma.mkv"])
      assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies", name)))
    assert.deepStrictEqual(trashed(b), [])
    assert.isTrue(onService(b, ids.show))
  })

  it("the daemon cleans up a file once it comes of age, with nothing else changing", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { ...CLEANUP, DLSYNC_CLEANUP_AFTER: "3s", DLSYNC_SYNC_POLL_INTERVAL: "1s" }
    const daemon = b.spawn(["run"], { env, deadlineMs: 90_000 })
    await waitUntil(() => !onService(b, ids.alpha), 45_000, `the cleanup\n${daemon.output().stderr}`)
    await waitUntil(() => !onService(b, ids.beta) && !onService(b, ids.gamma), 15_000, "the rest")
    assert.isTrue(onService(b, ids.show))
    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    for (const name of ["alpha.mkv", "beta.mkv", "gamma.mkv"])
      assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies", name)))
    assert.deepStrictEqual(trashed(b), [])
  })
})
