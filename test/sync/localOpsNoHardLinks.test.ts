/**
 * LocalOps on a file system without hard links (SMB/FUSE mounts answer link(2) with EPERM
 * or ENOTSUP): moves fall back to a rename, which must still never replace a target. The
 * file system's refusal is injected into node:fs; `onLink` lets a test play another writer
 * that creates the target between the plan's check and the fallback rename.
 */
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { beforeEach, vi } from "vitest"

const injected = vi.hoisted(() => ({ onLink: undefined as ((to: string) => void) | undefined }))

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>()
  const linkSync = (_from: string, to: string) => {
    injected.onLink?.(to)
    throw Object.assign(new Error("EPERM: operation not permitted, link"), { code: "EPERM" })
  }
  return { ...actual, default: { ...actual, linkSync }, linkSync }
})

const Fs = await import("node:fs")
const { LocalOps, land, toLocalStat } = await import("../../src/sync/localOps.ts")

const tmp = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-nolinks-"))

const withOps = <A, E>(root: string, f: (ops: typeof LocalOps.Service) => Effect.Effect<A, E>) =>
  LocalOps.use(f).pipe(Effect.provide(LocalOps.layer(root), { local: true }))

const write = (root: string, rel: string, text: string) => {
  const full = Path.join(root, rel)
  Fs.mkdirSync(Path.dirname(full), { recursive: true })
  Fs.writeFileSync(full, text)
  return toLocalStat(Fs.lstatSync(full, { bigint: true }))
}

/** Another writer: creates the target the moment the move tries its hard link. */
const racer = (text: string) => (to: string) => Fs.writeFileSync(to, text)

beforeEach(() => {
  injected.onLink = undefined
})

describe("LocalOps without hard links", () => {
  it.effect("renames and lands by a plain rename", () =>
    Effect.gen(function* () {
      const root = tmp()
      const a = write(root, "a.mkv", "a")
      yield* withOps(root, (ops) => ops.rename("a.mkv", "b.mkv", a))
      assert.strictEqual(Fs.readFileSync(Path.join(root, "b.mkv"), "utf8"), "a")
      write(root, ".dlsync/partial/p", "new")
      yield* land(root, Path.join(root, ".dlsync/partial/p"), "c.mkv", null)
      assert.strictEqual(Fs.readFileSync(Path.join(root, "c.mkv"), "utf8"), "new")
    })
  )

  it.effect("a rename never replaces a file that appeared after the check", () =>
    Effect.gen(function* () {
      const root = tmp()
      const a = write(root, "a.mkv", "a")
      injected.onLink = racer("theirs")
      const error = yield* Effect.flip(withOps(root, (ops) => ops.rename("a.mkv", "b.mkv", a)))
      assert.strictEqual(error.reason, "exists")
      assert.strictEqual(Fs.readFileSync(Path.join(root, "b.mkv"), "utf8"), "theirs")
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.mkv"), "utf8"), "a")
    })
  )

  it.effect("a landing never replaces a file that appeared after the check", () =>
    Effect.gen(function* () {
      const root = tmp()
      write(root, ".dlsync/partial/p", "new")
      injected.onLink = racer("theirs")
      const error = yield* Effect.flip(land(root, Path.join(root, ".dlsync/partial/p"), "c.mkv", null))
      assert.strictEqual(error.reason, "exists")
      assert.strictEqual(Fs.readFileSync(Path.join(root, "c.mkv"), "utf8"), "theirs")
    })
  )
})
