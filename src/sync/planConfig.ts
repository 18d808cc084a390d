/**
 * The planner's policy from the configuration's `[mirror]` section and the root's detected
 * case sensitivity (see caseSensitivity.ts). Paths are bounded by the length of the root as
 * LocalOps resolves it.
 */
import * as NodePath from "node:path"
import type { AppConfig } from "../config/loadConfig.ts"
import type { PlanConfig } from "./planner.ts"
import { maxPathBytesUnder } from "./tree.ts"

export const planConfigOf = (
  mirror: AppConfig["mirror"],
  caseInsensitive: boolean,
  /** Remote ids mirrored whatever the filters say (the intake queue's downloads). */
  alwaysMirror?: ReadonlySet<string>
): PlanConfig => ({
  folders: mirror.folders,
  kinds: mirror.kinds,
  include: mirror.include,
  exclude: mirror.exclude,
  maxFileSize: mirror.max_file_size,
  portableNames: mirror.portable_names,
  caseInsensitive,
  maxPathBytes: maxPathBytesUnder(NodePath.resolve(mirror.root)),
  onRemoteDelete: mirror.on_remote_delete,
  onLocalDelete: mirror.on_local_delete,
  maxDelete: mirror.max_delete,
  ...(alwaysMirror === undefined ? {} : { alwaysMirror })
})
