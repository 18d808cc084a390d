/** `dlsync demo` (`npm run demo`) runs by itself and leaves the demonstrated tree. */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { runCli } from "./harness.ts"

let dir: string | undefined
afterEach(() => {
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("demo", { timeout: 120_000 }, () => {
  it("mirrors the sample account, shows each remote change mirrored, and exits 0", async () => {
    dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-demo-test-"))
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("DLSYNC_")) env[k] = v
    const result = await runCli(["demo", "--dir", dir], { ...env, HOME: dir }, 90_000)
    assert.strictEqual(result.code, 0, result.stderr)
    const mirror = Path.join(dir, "mirror")
    assert.include(result.stdout, `Everything above is in ${mirror}`)
    // The summary is the end: no log line after it (app state is written before the tree).
    assert.match(
      result.stdout.trimEnd().split("\n").at(-1) ?? "",
      /^\(state in .*; the folder is yours: remove it when done/
    )
    assert.strictEqual(result.stderr.trim(), "", "no log lines")
    assert.isTrue(Fs.existsSync(Path.join(mirror, "Read me first.txt")), "renamed")
    assert.isFalse(Fs.existsSync(Path.join(mirror, "Welcome.txt")))
    assert.isTrue(Fs.existsSync(Path.join(mirror, "Movies/notes.txt")), "moved")
    assert.isFalse(Fs.existsSync(Path.join(mirror, "Documents/backup.zip")), "deleted")
    assert.strictEqual(Fs.statSync(Path.join(mirror, "Movies/New Arrival (2026).mkv")).size, 3_000_000, "added")

    // A magnet sent through the qBittorrent API as Sonarr sends it, mirrored and reported complete.
    const release = "Demo.Show.S01E01.1080p"
    assert.match(result.stdout, /^6\. Sonarr sends a release through dlsync's qBittorrent API$/m)
    assert.match(result.stdout, /^ {2}qBittorrent API: http:\/\/127\.0\.0\.1:\d+ {2}\(user demo, password demo\)$/m)
    assert.match(
      result.stdout,
      /^ {2}POST \/api\/v2\/torrents\/add {2}Demo\.Show\.S01E01\.1080p in category TV → Ok\.$/m
    )
    assert.match(
      result.stdout,
      /^ {4}✓ TV\/Demo\.Show\.S01E01\.1080p\/Demo\.Show\.S01E01\.1080p\.mkv {2}\(7\.6 MiB in \d+ ms\)$/m
    )
    assert.match(result.stdout, /^ {2}torrents\/info: stoppedUP, progress 1\.00$/m)
    const content = Path.join(mirror, "TV", release)
    // One case for the shows: the release's category is the library's own TV folder.
    assert.deepStrictEqual(
      Fs.readdirSync(mirror).filter((name) => name.toLowerCase() === "tv"),
      ["TV"]
    )
    assert.include(result.stdout, `\n  ✓ complete on disk at content_path ${content}\n`)
    // Reported complete after its files were listed as landed, and only then.
    const lines = result.stdout.split("\n")
    const landed = lines.findIndex((l) => l.includes(`✓ TV/${release}/${release}.mkv`))
    const complete = lines.findIndex((l) => l.includes("torrents/info: stoppedUP"))
    assert.isTrue(landed >= 0 && complete > landed, "complete after the files landed")
    assert.strictEqual(Fs.statSync(Path.join(content, `${release}.mkv`)).size, 8_000_000)
    assert.strictEqual(Fs.statSync(Path.join(content, "Extras", `${release}.sample.mkv`)).size, 800_000)
  })

  it("in a folder of its own making, removes it at the end unless --keep", async () => {
    const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-demo-tmp-"))
    dir = tmp
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("DLSYNC_")) env[k] = v
    const removed = await runCli(["demo"], { ...env, HOME: tmp, TMPDIR: tmp }, 90_000)
    assert.strictEqual(removed.code, 0, removed.stderr)
    const [, made] = /^Everything above was in (\S+)\/mirror/m.exec(removed.stdout) ?? []
    assert.isDefined(made, removed.stdout)
    assert.isTrue(made!.startsWith(Path.join(tmp, "dlsync-demo-")), made)
    assert.isFalse(Fs.existsSync(made!), "removed")
    assert.match(removed.stdout.trimEnd().split("\n").at(-1) ?? "", /removed; `dlsync demo --keep` keeps it/)
    assert.deepStrictEqual(
      Fs.readdirSync(tmp).filter((name) => name.startsWith("dlsync-demo-")),
      [],
      "nothing of the demo left in the temporary folder"
    )

    const kept = await runCli(["demo", "--keep"], { ...env, HOME: tmp, TMPDIR: tmp }, 90_000)
    assert.strictEqual(kept.code, 0, kept.stderr)
    const [, keptDir] = /^Everything above is in (\S+)\/mirror/m.exec(kept.stdout) ?? []
    assert.isTrue(Fs.existsSync(Path.join(keptDir ?? "", "mirror", "Read me first.txt")), kept.stdout)
  })
})
