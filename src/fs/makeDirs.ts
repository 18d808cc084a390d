/**
 * `mkdir -p`, made one level at a time. Node's own recursive mkdir never returns when a
 * parent exists but cannot hold children: under /proc, mkdir fails ENOENT, which Node's walk
 * takes for a missing parent and retries for good (a state_dir there spun a core and ignored
 * SIGTERM). Here that mkdir's error is thrown like every other (ENOTDIR, EACCES, ENOSPC).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { errnoCode } from "./errno.ts"

export const makeDirsSync = (dir: string, mode = 0o777): void => {
  const missing: Array<string> = []
  for (let at = Path.resolve(dir); !Fs.existsSync(at); at = Path.dirname(at)) {
    missing.push(at)
    if (Path.dirname(at) === at) break
  }
  for (const level of missing.reverse()) {
    try {
      Fs.mkdirSync(level, { mode })
    } catch (error) {
      // Made meanwhile by another process: as good.
      if (errnoCode(error) !== "EEXIST") throw error
    }
  }
}
