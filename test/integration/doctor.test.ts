/**
 * `dlsync doctor`, the real CLI against a stand-in Sonarr (test/standins/arrStandIn.ts) whose
 * file system is the sandbox's folder mounted at /data, as a container sees it: the mirror
 * root `<dir>/root` is `/data/root` for Sonarr. Categories come from Sonarr's download client.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { arrStandIn } from "../standins/arrStandIn.ts"
import { type StandIn, startStandIn } from "../standins/recordingServer.ts"
import { type Sandbox, sandbox, seedSmallLibrary, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  await box?.close()
  box = undefined
  close = undefined
})

const KEY = "sonarr-api-key-0123456789"

const setUp = async (): Promise<{ box: Sandbox; sonarr: StandIn }> => {
  box = await sandbox()
  const sonarr = await startStandIn(
    arrStandIn({
      apiKey: KEY,
      mount: { hostDir: box.dir, appPath: "/data" },
      rootFolders: ["/data/library/tv/"],
      downloadClients: [{ tvCategory: "tv" }]
    })
  )
  close = sonarr.close
  return { box, sonarr }
}

const doctor = (b: Sandbox, url: string, env: Record<string, string> = {}) =>
  b.run(["doctor"], { env: { DLSYNC_SONARR_URL: url, DLSYNC_SONARR_API_KEY: KEY, ...env } })

/** Probe files left anywhere below the sandbox. */
const probesLeft = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) =>
    Path.basename(p).startsWith(".dlsync-probe-")
  )

describe("dlsync doctor", { timeout: 60_000 }, () => {
  it("matching paths: OK per category, exit 0, the probe removed", async () => {
    const { box, sonarr } = await setUp()
    const result = await doctor(box, sonarr.url, { DLSYNC_SONARR_PATH_MAP: JSON.stringify([[box.dir, "/data"]]) })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout.trim(), "Sonarr [tv]: OK (Sonarr sees the files at /data/root/tv/)")
    const asked = sonarr.requests.find((r) => r.url.pathname === "/api/v3/filesystem")
    assert.strictEqual(asked?.url.searchParams.get("path"), "/data/root/tv/")
    assert.strictEqual(asked?.url.searchParams.get("includeFiles"), "true")
    assert.deepStrictEqual(probesLeft(box.dir), [])
    assert.isFalse(Fs.existsSync(Path.join(box.root, "tv")), "the category folder it created is gone")
  })

  it("a container mapping missing: exit 1 and the exact path_map, which makes the next run OK", async () => {
    const { box, sonarr } = await setUp()
    const first = await doctor(box, sonarr.url)
    assert.strictEqual(first.code, 1, first.stderr)
    const probe = /does not see (\S+) as (\S+); it sees it as (\S+): set sonarr\.path_map = (.+)$/m.exec(first.stdout)
    assert.isNotNull(probe, first.stdout)
    const [, local, reported, seenAt, value] = probe ?? []
    const name = Path.basename(local ?? "")
    assert.strictEqual(local, Path.join(box.root, "tv", name))
    assert.strictEqual(reported, `${box.root}/tv/${name}`)
    assert.strictEqual(seenAt, `/data/root/tv/${name}`)
    assert.deepStrictEqual(JSON.parse(value ?? ""), [[box.root, "/data/root"]])
    assert.match(first.stderr, /^dlsync: 1 category is not seen by the app where dlsync reports it/m)
    assert.deepStrictEqual(probesLeft(box.dir), [])

    const second = await doctor(box, sonarr.url, { DLSYNC_SONARR_PATH_MAP: value ?? "" })
    assert.strictEqual(second.code, 0, second.stderr)
    assert.match(second.stdout, /^Sonarr \[tv\]: OK/)
  })

  it("a wrong API key: one line, exit 78", async () => {
    const { box, sonarr } = await setUp()
    const result = await doctor(box, sonarr.url, { DLSYNC_SONARR_API_KEY: "not-the-key" })
    assert.strictEqual(result.code, 78)
    assert.strictEqual(result.stdout, "")
    const lines = result.stderr.trim().split("\n")
    assert.strictEqual(lines.length, 1, result.stderr)
    assert.match(lines[0] ?? "", /Sonarr at http:\/\/127\.0\.0\.1:\d+ says the API key is wrong \(HTTP 401\)/)
    assert.notInclude(result.stderr, "not-the-key")
  })

  it("a URL that is not Sonarr's API (another program answering JSON): one line naming what is missing, exit 78", async () => {
    box = await sandbox()
    const other = await startStandIn(() => ({ status: 200, body: '{"status":"ok"}', contentType: "application/json" }))
    close = other.close
    const result = await doctor(box, other.url)
    assert.strictEqual(result.code, 78, result.stderr)
    assert.strictEqual(
      result.stderr.trim(),
      `dlsync: configuration error: ${other.url} is not Sonarr's API (Sonarr's answer to GET /api/v3/system/status has no "appName"): check sonarr.url, with Sonarr's URL Base if it has one`
    )
  })

  it("Sonarr unreachable: one line, exit 75", async () => {
    const { box, sonarr } = await setUp()
    const url = sonarr.url
    await close?.()
    close = undefined
    const result = await doctor(box, url)
    assert.strictEqual(result.code, 75, result.stderr)
    assert.strictEqual(
      result.stderr.trim(),
      `dlsync: cannot reach Sonarr at ${url}: connection refused; is it running, and is sonarr.url right?`
    )
  })

  it("at daemon start: a mismatch is a warning line with the fix, and the daemon mirrors anyway", async () => {
    const { box, sonarr } = await setUp()
    seedSmallLibrary(box.emu)
    const daemon = box.spawn(["run"], {
      env: { DLSYNC_SONARR_URL: sonarr.url, DLSYNC_SONARR_API_KEY: KEY, DLSYNC_SYNC_POLL_INTERVAL: "1h" },
      deadlineMs: 60_000
    })
    await waitUntil(
      () => daemon.output().stderr.includes("set sonarr.path_map"),
      30_000,
      `the doctor's warning\n${daemon.output().stderr}`
    )
    // The log is JSON lines (stderr is not a terminal).
    const warning = daemon
      .output()
      .stderr.split("\n")
      .filter((l) => l.includes("set sonarr.path_map"))
      .map((l) => JSON.parse(l) as { level: string; message: string })[0]
    assert.strictEqual(warning?.level, "warn")
    assert.include(warning?.message, `path doctor: Sonarr [tv]: Sonarr does not see ${box.root}/tv/.dlsync-probe-`)
    assert.include(warning?.message, `set sonarr.path_map = [[${JSON.stringify(box.root)}, "/data/root"]]`)
    await waitUntil(() => Fs.existsSync(Path.join(box.root, "readme.txt")), 30_000, "the mirror")
    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.deepStrictEqual(probesLeft(box.dir), [])
  })
})
