/**
 * Safe operations on the mirror root. Every path is relative to the root.
 *
 * Invariants (ARCHITECTURE.md safety invariants 4, 5 and 7):
 * - Containment: a path is refused unless it resolves inside the root; empty, `.` and `..`
 *   components, NUL bytes and absolute paths are refused outright.
 * - No symlink inside the root is followed for a write: every ancestor of a path written,
 *   renamed or removed is lstat'ed and must be a real directory.
 * - Destroy only what is expected: rename, trash, delete and rmdir re-check a fresh lstat
 *   (type, size, mtime and inode for files; type and inode for folders, whose mtime moves
 *   with their contents) right before acting, and never replace an existing target.
 * - Durable: after a rename or a removal the parent directories are fsynced.
 * - The root is told from an empty mount point by `<root>/.dlsync/marker`.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Context, Effect, Layer, Schema } from "effect"
import type { LocalStat } from "../domain/LocalEntry.ts"
import { describeError, errnoCode } from "../fs/errno.ts"
import { fsyncDirSync } from "../fs/fsyncDir.ts"
import { withInfix } from "./names.ts"
import { DLSYNC_DIR } from "./tree.ts"

export const MARKER = `${DLSYNC_DIR}/marker`
export const TRASH_DIR = `${DLSYNC_DIR}/trash`

/** A local operation was refused or failed; the path is left as it was. */
export class LocalOpError extends Schema.TaggedError<LocalOpError>()("LocalOpError", {
  path: Schema.String,
  reason: Schema.Literals(["outside_root", "symlink", "not_a_directory", "changed", "exists", "missing", "io"]),
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

/**
 * The root is missing, or looks unmounted (its marker is gone while the store says files
 * were mirrored): nothing may be read as deleted nor written anew. The CLI exits 78.
 */
export class RootUnavailable extends Schema.TaggedError<RootUnavailable>()("RootUnavailable", {
  root: Schema.String,
  reason: Schema.Literals(["missing", "not_a_directory", "unmounted"])
}) {
  override get message(): string {
    return ROOT_PROBLEMS[this.reason](this.root)
  }
}

const ROOT_PROBLEMS: Readonly<Record<RootUnavailable["reason"], (root: string) => string>> = {
  missing: (root) => `the mirror root ${root} does not exist (is the disk mounted?)`,
  not_a_directory: (root) => `the mirror root ${root} is not a directory`,
  unmounted: (root) =>
    `the mirror root ${root} has lost its ${MARKER} marker although files were mirrored there: ` +
    `it looks unmounted or replaced. Mount it again; if the mirror really was wiped, remove the state ` +
    `database to rebuild in adopt-only mode.`
}

export class LocalOps extends Context.Service<
  LocalOps,
  {
    readonly root: string
    /** A fresh lstat, never following a symlink; None when nothing is there. */
    readonly lstat: (path: string) => Effect.Effect<LocalStat | undefined, LocalOpError>
    /**
     * Checks the root before a pass: it must exist and be a directory; its marker must be
     * there if `mirrored` (the store holds entries); a first pass creates the marker.
     */
    readonly checkRoot: (mirrored: boolean) => Effect.Effect<void, RootUnavailable | LocalOpError>
    /** Creates `path` and its missing ancestors as directories; returns the folder's lstat. */
    readonly mkdirp: (path: string) => Effect.Effect<LocalStat, LocalOpError>
    /** Renames `from` (which must match `expected`) to `to`, which must not exist. */
    readonly rename: (from: string, to: string, expected: LocalStat) => Effect.Effect<void, LocalOpError>
    /** Moves `path` into `.dlsync/trash/<date>/<path>`; returns where it went. */
    readonly trash: (path: string, expected: LocalStat, date: string) => Effect.Effect<string, LocalOpError>
    readonly remove: (path: string, expected: LocalStat) => Effect.Effect<void, LocalOpError>
    /** Removes an empty folder; false (and nothing done) when it holds anything. */
    readonly removeFolderIfEmpty: (path: string, expected: LocalStat) => Effect.Effect<boolean, LocalOpError>
    /** Deletes trash days older than `days` before `today` (YYYY-MM-DD); returns them. */
    readonly purgeTrash: (today: string, days: number) => Effect.Effect<ReadonlyArray<string>, LocalOpError>
  }
>()("dlsync/sync/LocalOps") {
  static readonly layer = (root: string): Layer.Layer<LocalOps> =>
    Layer.sync(LocalOps, () => LocalOps.of(makeLocalOps(NodePath.resolve(root))))
}

/** Whether a fresh lstat still shows what an action expects to find. */
export const sameAsExpected = (actual: LocalStat, expected: LocalStat): boolean =>
  actual.type === expected.type &&
  actual.ino === expected.ino &&
  (actual.type === "folder" || (actual.size === expected.size && actual.mtimeNs === expected.mtimeNs))

/**
 * Whether the absolute path `full` lies strictly below `root`. Outside means a leading `..`
 * component: a name that merely starts with two dots (`..hidden`, `...txt`) is inside.
 */
export const isBelow = (root: string, full: string): boolean => {
  const rel = NodePath.relative(root, full)
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${NodePath.sep}`) && !NodePath.isAbsolute(rel)
}

/** Converts a bigint lstat to a LocalStat. */
export const toLocalStat = (st: Fs.BigIntStats): LocalStat => ({
  type: st.isFile() ? "file" : st.isDirectory() ? "folder" : st.isSymbolicLink() ? "symlink" : "other",
  size: Number(st.size),
  mtimeNs: st.mtimeNs,
  ino: st.ino
})

// ---------------------------------------------------------------------------------------

/**
 * The absolute path of `rel` under `root`, after the containment checks every write goes
 * through (the mirror's one containment check: local operations and landed downloads alike).
 */
export const resolveInRoot = (root: string, rel: string): string => {
  const parts = rel.split("/")
  if (
    rel === "" ||
    NodePath.isAbsolute(rel) ||
    rel.includes("\0") ||
    parts.some((p) => p === "" || p === "." || p === "..")
  ) {
    throw opError(rel, "outside_root", "not a clean path relative to the mirror root")
  }
  const full = NodePath.join(root, ...parts)
  if (!isBelow(root, full)) {
    throw opError(rel, "outside_root", "resolves outside the mirror root")
  }
  return full
}

/** Every ancestor of `rel` below the root must be a real directory (or, if `create`, is made one). */
const checkAncestors = (root: string, rel: string, create: boolean): void => {
  const parts = rel.split("/")
  let current = root
  for (let i = 0; i < parts.length - 1; i++) {
    current = NodePath.join(current, parts[i]!)
    const st = lstatOrUndefined(current)
    const shown = parts.slice(0, i + 1).join("/")
    if (st === undefined) {
      if (!create) throw opError(rel, "missing", `folder ${shown} does not exist`)
      Fs.mkdirSync(current)
      continue
    }
    if (st.isSymbolicLink()) throw opError(rel, "symlink", `${shown} is a symlink: not followed`)
    if (!st.isDirectory()) throw opError(rel, "not_a_directory", `${shown} is not a folder`)
  }
}

const expect = (rel: string, full: string, expected: LocalStat): void => {
  const st = lstatOrUndefined(full)
  if (st === undefined) throw opError(rel, "missing", "no longer there")
  const actual = toLocalStat(st)
  if (!sameAsExpected(actual, expected)) {
    throw opError(
      rel,
      "changed",
      `changed since it was planned (${describeStat(actual)}, expected ${describeStat(expected)})`
    )
  }
}

/**
 * Puts a finished download in place, the one rename a downloaded file makes: `from` is an
 * absolute path under `<root>/.dlsync/partial` (already fsynced); `toRel` must still hold
 * what `replace` describes (null: nothing, and nothing that appears meanwhile is replaced),
 * and its folders must be real folders. The folder is fsynced after the rename. Returns the
 * landed file's lstat, to be recorded as written.
 */
export const landFile = (root: string, from: string, toRel: string, replace: LocalStat | null): LocalStat => {
  const to = resolveInRoot(root, toRel)
  // Compared after normalizing: `<root>/.dlsync/partial/../../x` starts with the prefix too.
  if (!isBelow(NodePath.join(root, DLSYNC_DIR, "partial"), NodePath.resolve(from))) {
    throw opError(toRel, "outside_root", `${from} is not under .dlsync/partial`)
  }
  checkAncestors(root, toRel, false)
  if (replace === null) moveFileNoReplace(from, to, toRel)
  else {
    expect(toRel, to, replace)
    Fs.renameSync(from, to)
  }
  fsyncDirSync(NodePath.dirname(to))
  return toLocalStat(Fs.lstatSync(to, { bigint: true }))
}

/** `landFile` as an effect: a refusal or an I/O error is a LocalOpError naming `toRel`. */
export const land = (
  root: string,
  from: string,
  toRel: string,
  replace: LocalStat | null
): Effect.Effect<LocalStat, LocalOpError> => runOp(toRel, () => landFile(root, from, toRel, replace))

const runOp = <A>(rel: string, f: () => A): Effect.Effect<A, LocalOpError> =>
  Effect.try({ try: f, catch: (e) => (e instanceof LocalOpError ? e : opError(rel, "io", describeError(e))) })

const makeLocalOps = (root: string): LocalOps["Service"] => {
  const resolve = (rel: string): string => resolveInRoot(root, rel)

  /** rename(2) that never replaces: hard link + unlink for files, checked rename for folders. */
  const renameNoReplace = (fromRel: string, toRel: string, expected: LocalStat): void => {
    const from = resolve(fromRel)
    const to = resolve(toRel)
    checkAncestors(root, fromRel, false)
    checkAncestors(root, toRel, false)
    expect(fromRel, from, expected)
    const existing = lstatOrUndefined(to)
    // A case-only rename on a case-insensitive root finds the source itself at the target.
    const sameFile = existing !== undefined && existing.ino === expected.ino
    if (existing !== undefined && !sameFile) throw alreadyThere(toRel)
    if (expected.type === "file" && !sameFile) moveFileNoReplace(from, to, toRel)
    else Fs.renameSync(from, to)
    fsyncDirSync(NodePath.dirname(from))
    fsyncDirSync(NodePath.dirname(to))
  }

  const run = runOp

  return {
    root,
    lstat: (rel) =>
      run(rel, () => {
        const st = lstatOrUndefined(resolve(rel))
        return st === undefined ? undefined : toLocalStat(st)
      }),
    checkRoot: (mirrored) =>
      Effect.suspend((): Effect.Effect<void, RootUnavailable | LocalOpError> => {
        const st = lstatOrUndefined(root, true)
        if (st === undefined) return Effect.fail(new RootUnavailable({ root, reason: "missing" }))
        if (!st.isDirectory()) return Effect.fail(new RootUnavailable({ root, reason: "not_a_directory" }))
        const marker = lstatOrUndefined(NodePath.join(root, MARKER))
        if (marker?.isFile()) return Effect.void
        if (mirrored) return Effect.fail(new RootUnavailable({ root, reason: "unmounted" }))
        return run(MARKER, () => {
          checkAncestors(root, MARKER, true)
          const full = resolve(MARKER)
          Fs.writeFileSync(full, "This folder is mirrored by dlsync. Its own files live under .dlsync/.\n", {
            flag: "wx",
            mode: 0o644
          })
          fsyncDirSync(NodePath.dirname(full))
        })
      }),
    mkdirp: (rel) =>
      run(rel, () => {
        const full = resolve(rel)
        checkAncestors(root, rel, true)
        const st = lstatOrUndefined(full)
        if (st === undefined) {
          Fs.mkdirSync(full)
          fsyncDirSync(NodePath.dirname(full))
        } else if (st.isSymbolicLink()) throw opError(rel, "symlink", "is a symlink: not followed")
        else if (!st.isDirectory()) throw opError(rel, "exists", "a file is there, not a folder")
        return toLocalStat(Fs.lstatSync(full, { bigint: true }))
      }),
    rename: (from, to, expected) => run(from, () => renameNoReplace(from, to, expected)),
    trash: (rel, expected, date) =>
      run(rel, () => {
        resolve(rel)
        let n = 1
        let target = `${TRASH_DIR}/${date}/${rel}`
        while (lstatOrUndefined(resolve(target)) !== undefined) {
          const slash = target.lastIndexOf("/")
          target = target.slice(0, slash + 1) + withInfix(rel.slice(rel.lastIndexOf("/") + 1), ` (${++n})`)
        }
        checkAncestors(root, target, true)
        renameNoReplace(rel, target, expected)
        return target
      }),
    remove: (rel, expected) =>
      run(rel, () => {
        const full = resolve(rel)
        checkAncestors(root, rel, false)
        expect(rel, full, expected)
        Fs.unlinkSync(full)
        fsyncDirSync(NodePath.dirname(full))
      }),
    removeFolderIfEmpty: (rel, expected) =>
      run(rel, () => {
        const full = resolve(rel)
        checkAncestors(root, rel, false)
        expect(rel, full, expected)
        try {
          Fs.rmdirSync(full)
        } catch (e) {
          if (errnoCode(e) === "ENOTEMPTY" || errnoCode(e) === "EEXIST") return false
          throw e
        }
        fsyncDirSync(NodePath.dirname(full))
        return true
      }),
    purgeTrash: (today, days) =>
      run(TRASH_DIR, () => {
        const dir = resolve(TRASH_DIR)
        checkAncestors(root, TRASH_DIR, false)
        const st = lstatOrUndefined(dir)
        if (st === undefined) return []
        if (!st.isDirectory()) throw opError(TRASH_DIR, "not_a_directory", "is not a folder")
        const cutoff = Date.parse(`${today}T00:00:00Z`) - days * 86_400_000
        const purged: Array<string> = []
        for (const name of Fs.readdirSync(dir).sort()) {
          const day = /^\d{4}-\d{2}-\d{2}$/.test(name) ? Date.parse(`${name}T00:00:00Z`) : Number.NaN
          if (Number.isNaN(day) || day >= cutoff) continue
          // rmSync never follows symlinks: a link inside the trash is removed, not its target.
          Fs.rmSync(NodePath.join(dir, name), { recursive: true, force: true })
          purged.push(`${TRASH_DIR}/${name}`)
        }
        if (purged.length > 0) fsyncDirSync(dir)
        return purged
      })
  }
}

/** Link errors that mean "this file system has no hard links": fall back to a checked rename. */
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"])

/**
 * Moves the file `from` to `to` without ever replacing what is at `to`: a hard link (which
 * fails on an existing target) and an unlink of the source. Where the file system has no
 * hard links, a rename once a fresh lstat finds `to` free (the window is the lstat's alone).
 */
const moveFileNoReplace = (from: string, to: string, toRel: string): void => {
  try {
    Fs.linkSync(from, to)
    unlinkOrUndo(from, to)
  } catch (e) {
    if (errnoCode(e) === "EEXIST") throw alreadyThere(toRel)
    if (!LINK_UNSUPPORTED.has(errnoCode(e) ?? "")) throw e
    if (lstatOrUndefined(to) !== undefined) throw alreadyThere(toRel)
    Fs.renameSync(from, to)
  }
}

const alreadyThere = (rel: string) => opError(rel, "exists", "something is already there: not replaced")

/** Second half of a link-then-unlink move; if the unlink fails, the new link is taken back. */
const unlinkOrUndo = (from: string, to: string): void => {
  try {
    Fs.unlinkSync(from)
  } catch (e) {
    Fs.rmSync(to, { force: true })
    throw e
  }
}

const opError = (path: string, reason: LocalOpError["reason"], detail: string) =>
  new LocalOpError({ path, reason, detail })

const lstatOrUndefined = (full: string, follow = false): Fs.BigIntStats | undefined => {
  try {
    return follow ? Fs.statSync(full, { bigint: true }) : Fs.lstatSync(full, { bigint: true })
  } catch (e) {
    if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return undefined
    throw e
  }
}

const describeStat = (s: LocalStat): string =>
  s.type === "file" ? `file of ${s.size} bytes, mtime ${s.mtimeNs}, inode ${s.ino}` : `${s.type}, inode ${s.ino}`
