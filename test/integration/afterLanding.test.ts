/**
 * `run --once` with a media server and a hook configured: the real CLI against the emulator,
 * a Jellyfin stand-in (the documented `POST /Library/Media/Updated`) and a hook that writes its
 * environment to a file. Each folder is refreshed once, the hook runs once per landed file
 * with that file's facts, a download_complete hook once the last file of a service download
 * landed, and all of it has happened when the command returns. The daemon stopped (SIGTERM)
 * while a hook runs ends the hook with everything it started, and exits.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { groupAlive, pidIn, processAlive } from "../hooks/support/processes.ts"
import { jellyfin, startStandIn } from "../standins/recordingServer.ts"
import { type Sandbox, sandbox, seedSmallLibrary, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  await box?.close()
  box = undefined
  close = undefined
})

const KEY = "jellyfin-api-key-123"

describe("run --once: media refresh and hooks", { timeout: 120_000 }, () => {
  it("refreshes each folder once; hooks run once per landed file with its facts, once per pass and per completed download", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    const release = box.emu.control.addFolder({ name: "Release", parentId: null })
    for (const name of ["part1.mkv", "part2.mkv"]) {
      box.emu.control.addFile({ name, parentId: release.id, sizeBytes: 5_000, downloadId: "dl_release" })
    }
    const server = await startStandIn(jellyfin(KEY))
    close = server.close
    const hookOut = Path.join(box.dir, "hook.jsonl")
    const completeOut = Path.join(box.dir, "complete.jsonl")
    const passOut = Path.join(box.dir, "pass.jsonl")
    const stdinToFile =
      'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => require("fs").appendFileSync(' +
      'process.argv[1], s + "\\n"))'
    const withStdin =
      'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => require("fs").appendFileSync(' +
      'process.argv[1], JSON.stringify({ id: process.env.DLSYNC_DOWNLOAD_ID, paths: JSON.parse(s) }) + "\\n"))'
    const script =
      'const e = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("DLSYNC_"))); ' +
      'require("fs").appendFileSync(process.argv[1], JSON.stringify(e) + "\\n")'
    const configFile = Path.join(box.dir, "config.toml")
    Fs.writeFileSync(
      configFile,
      [
        "[jellyfin]",
        `url = "${server.url}"`,
        `api_key = "${KEY}"`,
        `path_map = [["${box.root}", "/media"]]`,
        "",
        "[[hooks]]",
        'event = "file_complete"',
        `command = [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(script)}, ${JSON.stringify(hookOut)}]`,
        'timeout = "20s"',
        "",
        "[[hooks]]",
        'event = "download_complete"',
        `command = [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(withStdin)}, ${JSON.stringify(completeOut)}]`,
        "",
        "[[hooks]]",
        'event = "pass_complete"',
        `command = [${JSON.stringify(process.execPath)}, "-e", ${JSON.stringify(stdinToFile)}, ${JSON.stringify(passOut)}]`,
        ""
      ].join("\n")
    )

    const result = await box.run(["run", "--once", "--config", configFile])
    assert.strictEqual(result.code, 0, result.stderr)

    const folders = server.requests.flatMap((r) =>
      (JSON.parse(r.body) as { Updates: Array<{ Path: string }> }).Updates.map((u) => u.Path)
    )
    assert.sameMembers(
      folders,
      ["/media/Movies", "/media/TV/Season 1", "/media/TV", "/media", "/media/Release"],
      "each folder once"
    )
    assert.notInclude(result.stdout + result.stderr, KEY)

    const runs = Fs.readFileSync(hookOut, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, string>)
    const files = ["Movies/alpha.mkv", "Movies/beta.mkv", "Movies/beta.en.srt", "TV/Season 1/e01.mkv"]
    files.push("TV/Season 1/e02.mkv", "TV/notes.txt", "readme.txt", "Release/part1.mkv", "Release/part2.mkv")
    assert.sameMembers(
      runs.map((e) => e.DLSYNC_RELATIVE_PATH),
      files,
      "once per landed file"
    )
    for (const env of runs) {
      const rel = env.DLSYNC_RELATIVE_PATH ?? ""
      assert.strictEqual(env.DLSYNC_EVENT, "file_complete")
      assert.strictEqual(env.DLSYNC_PATH, Path.join(box.root, rel))
      if (!rel.startsWith("Release/")) assert.strictEqual(env.DLSYNC_FILE_ID, ids.get(rel))
      assert.strictEqual(env.DLSYNC_SIZE, String(Fs.statSync(Path.join(box.root, rel)).size))
      assert.strictEqual(env.DLSYNC_CATEGORY, rel.includes("/") ? rel.split("/")[0] : "")
      assert.isUndefined(env.DLSYNC_SERVICE_API_KEY, "dlsync's own settings stay out of the hook")
    }
    const passes = Fs.readFileSync(passOut, "utf8").trim().split("\n")
    assert.strictEqual(passes.length, 1, "one pass")
    const absolute = (rels: ReadonlyArray<string>) => rels.map((rel) => Path.join(box!.root, rel))
    assert.sameMembers(
      JSON.parse(passes[0]!) as Array<string>,
      absolute([...files, "Movies", "TV", "TV/Season 1", "Release"]),
      "pass_complete lists every path the pass created"
    )
    const completed = Fs.readFileSync(completeOut, "utf8").trim().split("\n")
    assert.deepStrictEqual(
      completed.map((l) => JSON.parse(l)),
      [
        {
          id: "dl_release",
          paths: [Path.join(box.root, "Release/part1.mkv"), Path.join(box.root, "Release/part2.mkv")]
        }
      ]
    )
  })

  it("SIGTERM while a hook and its background child run: both are ended and the daemon exits", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    const pids = Path.join(box.dir, "hook")
    const configFile = Path.join(box.dir, "config.toml")
    const script = `[ -e "$1.hook" ] && exit 0; echo $$ > "$1.hook"; sleep 240 & echo $! > "$1"; wait`
    Fs.writeFileSync(
      configFile,
      [
        "[[hooks]]",
        'event = "file_complete"',
        `command = ["/bin/sh", "-c", ${JSON.stringify(script)}, "hook", ${JSON.stringify(pids)}]`,
        'timeout = "10m"',
        ""
      ].join("\n")
    )
    const daemon = box.spawn(["run", "--config", configFile], { deadlineMs: 60_000 })
    await waitUntil(() => pidIn(pids) !== undefined, 30_000, "the hook started its child")
    const hook = pidIn(`${pids}.hook`) ?? assert.fail("the hook wrote its pid")
    const child = pidIn(pids) ?? assert.fail("the hook wrote its child's pid")
    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.isFalse(groupAlive(hook), "the hook's group is gone")
    assert.isFalse(processAlive(child), "its background child is gone")
    assert.include(exit.stderr, "running hooks stopped")
  })
})
