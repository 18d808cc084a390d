/**
 * The mirror's one containment check (local operations and landed downloads alike): a path
 * is refused unless it resolves inside the root; empty, `.` and `..` components, NUL bytes
 * and absolute paths are refused outright; no symlink inside the root is followed.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { opError } from "./LocalOpError.ts"
import { lstatOrUndefined } from "./localStat.ts"

/**
 * Whether the absolute path `full` lies strictly below `root`. Outside means a leading `..`
 * component: a name that merely starts with two dots (`..hidden`, `...txt`) is inside.
 */
export const isBelow = (root: string, full: string): boolean => {
  const rel = NodePath.relative(root, full)
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${NodePath.sep}`) && !NodePath.isAbsolute(rel)
}

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
export const checkAncestors = (root: string, rel: string, create: boolean): void => {
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
