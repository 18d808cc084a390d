/**
 * Poster sidecars through the real CLI against the emulator: `run --once` with posters on
 * writes `<name>-poster.webp` beside each video with the service's bytes, fetching each
 * distinct (content-addressed) URL once; a video deleted remotely takes its sidecar to the
 * trash with it; with posters off no poster data is asked for and none fetched.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { posterBytes } from "../../src/emulator/records.ts"
import { contentMismatches, type Sandbox, sandbox } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

const POSTER = { width: 320, height: 480, dominantColor: "#123456" }

const seed = (b: Sandbox) => {
  const movies = b.emu.control.addFolder({ name: "Movies", parentId: null })
  const add = (name: string, poster: typeof POSTER | null) =>
    b.emu.control.addFile({ name, parentId: movies.id, sizeBytes: 2048, kind: "video", poster }).id
  return {
    alpha: add("alpha.mkv", POSTER),
    beta: add("beta.mp4", POSTER),
    plain: add("plain.mkv", null)
  }
}

const posterFetches = (b: Sandbox) => b.emu.control.requests().filter((r) => r.path.startsWith("/posters/"))
const apiRequests = (b: Sandbox) => b.emu.control.requests().filter((r) => r.origin === "api")

describe("posters", { timeout: 120_000 }, () => {
  it("run --once writes sidecars with the service's bytes, one fetch per URL; a remote deletion trashes the sidecar with its video", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { DLSYNC_POSTERS_ENABLED: "true" }
    const first = await b.run(["run", "--once"], { env })
    assert.strictEqual(first.code, 0, first.stderr)

    for (const name of ["alpha", "beta"]) {
      const sidecar = Path.join(b.root, `Movies/${name}-poster.webp`)
      const id = name === "alpha" ? ids.alpha : ids.beta
      assert.deepStrictEqual(Fs.readFileSync(sidecar), posterBytes(POSTER, id), `${name}'s sidecar`)
    }
    assert.isFalse(Fs.existsSync(Path.join(b.root, "Movies/plain-poster.webp")), "no poster, no sidecar")
    const fetches = posterFetches(b)
    assert.strictEqual(fetches.length, 2, "one fetch per distinct poster URL")
    assert.strictEqual(new Set(fetches.map((r) => r.path)).size, 2)
    assert.isTrue(
      fetches.every((r) => r.headers.authorization === undefined),
      "no bearer to the poster URL"
    )
    assert.isTrue(
      apiRequests(b).some((r) => r.path.includes("include_poster=true")),
      "the feed asks for poster data"
    )

    // Nothing changed: nothing fetched again.
    const again = await b.run(["run", "--once"], { env })
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(posterFetches(b).length, 2)

    // A renamed video's sidecar follows its name, from the cache: the URL is not fetched again.
    b.emu.control.rename(ids.beta, "gamma.mp4")
    const renamed = await b.run(["run", "--once"], { env })
    assert.strictEqual(renamed.code, 0, renamed.stderr)
    assert.deepStrictEqual(
      Fs.readFileSync(Path.join(b.root, "Movies/gamma-poster.webp")),
      posterBytes(POSTER, ids.beta)
    )
    assert.isFalse(Fs.existsSync(Path.join(b.root, "Movies/beta-poster.webp")))
    assert.strictEqual(posterFetches(b).length, 2)

    b.emu.control.remove([ids.alpha])
    const third = await b.run(["run", "--once"], { env })
    assert.strictEqual(third.code, 0, third.stderr)
    assert.isFalse(Fs.existsSync(Path.join(b.root, "Movies/alpha.mkv")))
    assert.isFalse(Fs.existsSync(Path.join(b.root, "Movies/alpha-poster.webp")), "the sidecar went with its video")
    const trash = Path.join(b.root, ".dlsync/trash")
    const trashed = Fs.readdirSync(trash, { recursive: true }).map(String)
    assert.isTrue(
      trashed.some((p) => p.endsWith("alpha.mkv")),
      trashed.join(", ")
    )
    assert.isTrue(
      trashed.some((p) => p.endsWith("alpha-poster.webp")),
      trashed.join(", ")
    )
    assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies/gamma-poster.webp")))
    assert.strictEqual(posterFetches(b).length, 2)
  })

  it("folder style: one poster.webp per folder, gone with the folder's last video", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { DLSYNC_POSTERS_ENABLED: "true", DLSYNC_POSTERS_STYLE: "folder" }
    const first = await b.run(["run", "--once"], { env })
    assert.strictEqual(first.code, 0, first.stderr)
    // The folder's first video by name with a poster: alpha.mkv.
    assert.deepStrictEqual(Fs.readFileSync(Path.join(b.root, "Movies/poster.webp")), posterBytes(POSTER, ids.alpha))
    assert.isFalse(Fs.existsSync(Path.join(b.root, "Movies/alpha-poster.webp")))

    b.emu.control.remove([ids.alpha, ids.beta, ids.plain])
    const second = await b.run(["run", "--once"], { env })
    assert.strictEqual(second.code, 0, second.stderr)
    assert.isFalse(Fs.existsSync(Path.join(b.root, "Movies/poster.webp")), "no video left: no folder poster")
  })

  it("a remote file that wants a poster's path gets it: the poster makes way", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { DLSYNC_POSTERS_ENABLED: "true" }
    const first = await b.run(["run", "--once"], { env })
    assert.strictEqual(first.code, 0, first.stderr)
    const movies = b.emu.control.item(ids.alpha)?.parentId ?? null
    b.emu.control.addFile({ name: "alpha-poster.webp", parentId: movies, sizeBytes: 777, kind: "image" })
    // The pass that finds the path taken says so; the poster makes way and the next pass fetches the file.
    await b.run(["run", "--once"], { env })
    const second = await b.run(["run", "--once"], { env })
    assert.strictEqual(second.code, 0, second.stderr)
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
    assert.strictEqual(Fs.statSync(Path.join(b.root, "Movies/alpha-poster.webp")).size, 777)
  })

  it("a video kept locally when it goes from the service (on_remote_delete = keep) keeps its sidecar", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const env = { DLSYNC_POSTERS_ENABLED: "true", DLSYNC_MIRROR_ON_REMOTE_DELETE: "keep" }
    const first = await b.run(["run", "--once"], { env })
    assert.strictEqual(first.code, 0, first.stderr)
    b.emu.control.remove([ids.alpha])
    for (let i = 0; i < 2; i++) {
      const next = await b.run(["run", "--once"], { env })
      assert.strictEqual(next.code, 0, next.stderr)
    }
    assert.isTrue(Fs.existsSync(Path.join(b.root, "Movies/alpha.mkv")))
    assert.deepStrictEqual(
      Fs.readFileSync(Path.join(b.root, "Movies/alpha-poster.webp")),
      posterBytes(POSTER, ids.alpha)
    )
  })

  it("turning posters on over an existing mirror lists the account again and adds sidecars, nothing else", async () => {
    box = await sandbox()
    const b = box
    const ids = seed(b)
    const off = await b.run(["run", "--once"])
    assert.strictEqual(off.code, 0, off.stderr)
    const before = b.emu.control.requests().length
    const on = await b.run(["run", "--once"], { env: { DLSYNC_POSTERS_ENABLED: "true" } })
    assert.strictEqual(on.code, 0, on.stderr)
    const since = b.emu.control.requests().slice(before)
    assert.isFalse(
      since.some((r) => r.path.includes("/download-link")),
      "no file fetched again"
    )
    assert.deepStrictEqual(
      Fs.readFileSync(Path.join(b.root, "Movies/alpha-poster.webp")),
      posterBytes(POSTER, ids.alpha)
    )
    assert.isFalse(Fs.existsSync(Path.join(b.root, ".dlsync/trash")))
    assert.deepStrictEqual(contentMismatches(b.emu, b.root), [])
  })

  it("posters off: no poster data asked for, none fetched, none written", async () => {
    box = await sandbox()
    const b = box
    seed(b)
    const run = await b.run(["run", "--once"])
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(posterFetches(b).length, 0)
    assert.isFalse(apiRequests(b).some((r) => r.path.includes("include_poster=true")))
    assert.deepStrictEqual(Fs.readdirSync(Path.join(b.root, "Movies")).sort(), ["alpha.mkv", "beta.mp4", "plain.mkv"])
  })
})
