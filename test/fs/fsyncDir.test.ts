/**
 * Directory fsync on a file system that cannot do it (SMB/CIFS, NFS, FUSE answer EINVAL or
 * ENOTSUP): the shared fsyncDir tolerates it, and so does every caller that goes through it
 * (atomic token files, the transfer engine's landing path). The failure is injected into
 * node:fs itself: fsync of a directory fd fails with `dirSyncError`, files sync normally.
 */
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { beforeEach, vi } from "vitest"

const injected = vi.hoisted(() => ({ dirSyncError: undefined as string | undefined, dirSyncs: 0 }))

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>()
  const errno = (code: string) => Object.assign(new Error(`${code}: fsync of a directory`), { code })
  const isDir = (fd: number) => actual.fstatSync(fd).isDirectory()
  const fsyncSync = (fd: number) => {
    if (isDir(fd)) {
      injected.dirSyncs++
      if (injected.dirSyncError !== undefined) throw errno(injected.dirSyncError)
    }
    actual.fsyncSync(fd)
  }
  const fsync = (fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
    if (isDir(fd)) {
      injected.dirSyncs++
      if (injected.dirSyncError !== undefined) return process.nextTick(cb, errno(injected.dirSyncError))
    }
    actual.fsync(fd, cb)
  }
  // FileHandle.sync of a directory fails the same way (a caller using fs.promises is covered too).
  const open = async (...args: Parameters<typeof actual.promises.open>) => {
    const handle = await actual.promises.open(...args)
    if (!isDir(handle.fd)) return handle
    const sync = () => {
      injected.dirSyncs++
      return injected.dirSyncError === undefined ? handle.sync() : Promise.reject(errno(injected.dirSyncError))
    }
    return { fd: handle.fd, sync, close: () => handle.close() }
  }
  const promises = { ...actual.promises, open }
  return { ...actual, default: { ...actual, fsyncSync, fsync, promises }, fsyncSync, fsync, promises }
})

const Fs = await import("node:fs")
const { fsyncDir, fsyncDirSync } = await import("../../src/fs/fsyncDir.ts")
const { writeFileAtomic, removeFileDurably } = await import("../../src/auth/atomicFile.ts")
const { completed, makeHarness, withServer } = await import("../transfer/support/harness.ts")

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-fsyncdir-"))

beforeEach(() => {
  injected.dirSyncError = undefined
  injected.dirSyncs = 0
})

describe("fsyncDir", () => {
  for (const code of ["EINVAL", "ENOTSUP"]) {
    it(`tolerates ${code} from a directory fsync (SMB/NFS/FUSE), sync and async`, async () => {
      injected.dirSyncError = code
      const dir = tempDir()
      fsyncDirSync(dir)
      await fsyncDir(dir)
      assert.strictEqual(injected.dirSyncs, 2)
    })
  }

  it("still fails on a real error", async () => {
    injected.dirSyncError = "EIO"
    const dir = tempDir()
    assert.throws(() => fsyncDirSync(dir), /EIO/)
    await fsyncDir(dir).then(
      () => assert.fail("resolved"),
      (e) => assert.strictEqual(e.code, "EIO")
    )
    const missing = Path.join(dir, "missing")
    assert.throws(() => fsyncDirSync(missing), /ENOENT/)
  })

  it("atomic small files are written and removed where the directory cannot be synced", () => {
    injected.dirSyncError = "EINVAL"
    const file = Path.join(tempDir(), "tokens.json")
    writeFileAtomic(file, "{}")
    assert.strictEqual(Fs.readFileSync(file, "utf8"), "{}")
    assert.isTrue(removeFileDurably(file))
    assert.isFalse(Fs.existsSync(file))
    assert.strictEqual(injected.dirSyncs, 2)
  })

  it.live("the transfer engine lands a file where the directory cannot be synced", () =>
    withServer(100 * 1024, (server, content) =>
      Effect.gen(function* () {
        injected.dirSyncError = "ENOTSUP"
        const h = makeHarness({ link: () => server.link("a") })
        completed(yield* h.download(h.request("a", content.length)))
        assert.isTrue(Fs.readFileSync(Path.join(h.root, "media/a.bin")).equals(content))
        assert.isAtLeast(injected.dirSyncs, 1)
      })
    )
  )
})
