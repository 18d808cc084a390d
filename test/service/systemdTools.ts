/**
 * The systemd binaries the service tests run. They come from Debian's `systemd` package
 * (`apt-get install -y systemd`); CI installs it. Where it cannot be installed, set
 * DLSYNC_SKIP_SYSTEMD_VERIFY=1 to skip these tests visibly instead of failing.
 */
import { spawnSync } from "node:child_process"

export const skipSystemd = process.env.DLSYNC_SKIP_SYSTEMD_VERIFY === "1"

/** Whether `name` runs here. */
export const hasTool = (name: string): boolean => spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0

/** Fails with the fix when a tool is missing, unless the opt-out is set. */
export const requireTools = (names: ReadonlyArray<string>): void => {
  const missing = names.filter((name) => !hasTool(name))
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(", ")} not found: install Debian's systemd package (apt-get install -y systemd), ` +
        "or set DLSYNC_SKIP_SYSTEMD_VERIFY=1 to skip the systemd tests"
    )
  }
}

/** True when the tests should be skipped: opted out and the tools are really missing. */
export const skipWithout = (names: ReadonlyArray<string>): boolean => skipSystemd && !names.every(hasTool)
