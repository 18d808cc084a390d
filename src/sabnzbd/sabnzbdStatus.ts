/**
 * The parts of SABnzbd's answers that describe the downloader rather than a job (api.py
 * `build_header`, `build_status`): the header every queue carries (pause, disk space, speed
 * limit, warnings, quota, cache) and the status document of `fullstatus`/`status`. Disk
 * space is the mirror root's (SABnzbd's download and complete folders are both that root
 * here), read with statfs; the rest says what dlsync is: no news servers, no quota, no cache,
 * no scripts.
 */
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import { Effect } from "effect"
import type { IntakeItem } from "../intake/Intake.ts"
import { SABNZBD_VERSION, toUnits } from "./sabnzbdFormat.ts"
import type { SabnzbdState } from "./sabnzbdState.ts"

export interface DiskSpace {
  /** GiB free and in all, -1 when unknown. */
  readonly free: number
  readonly total: number
}

export const diskSpace = (root: string): Effect.Effect<DiskSpace> =>
  Effect.promise(() =>
    NodeFs.statfs(root).then(
      (s) => ({ free: (s.bavail * s.bsize) / GIB, total: (s.blocks * s.bsize) / GIB }),
      () => ({ free: -1, total: -1 })
    )
  )

/** build_header(for_template=False): what every queue answer starts with. */
export const queueHeader = (jobs: ReadonlyArray<IntakeItem>, state: SabnzbdState, disk: DiskSpace) => {
  const paused = isPaused(jobs)
  return {
    version: SABNZBD_VERSION,
    paused,
    pause_int: String(state.pauseInterval),
    paused_all: paused,
    diskspace1: disk.free.toFixed(2),
    diskspace2: disk.free.toFixed(2),
    diskspace1_norm: toUnits(Math.max(0, disk.free) * GIB),
    diskspace2_norm: toUnits(Math.max(0, disk.free) * GIB),
    diskspacetotal1: disk.total.toFixed(2),
    diskspacetotal2: disk.total.toFixed(2),
    speedlimit: state.speedlimit,
    speedlimit_abs: "",
    have_warnings: "0",
    finishaction: null,
    quota: toUnits(0, "B"),
    have_quota: false,
    left_quota: toUnits(0, "B"),
    cache_art: "0",
    cache_size: toUnits(0, "B")
  }
}

/** build_status: the `fullstatus` (and `status`) document; the dashboard's lookups only when not skipped. */
export const statusDocument = (
  jobs: ReadonlyArray<IntakeItem>,
  state: SabnzbdState,
  disk: DiskSpace,
  options: { readonly completeDir: string; readonly skipDashboard: boolean; readonly uptimeSeconds: number }
) => ({
  ...queueHeader(jobs, state, disk),
  uptime: age(options.uptimeSeconds),
  color_scheme: "",
  confighelpuri: `https://sabnzbd.org/wiki/configuration/${SABNZBD_VERSION.slice(0, 3)}/`,
  pid: process.pid,
  active_lang: "en",
  rtl: false,
  my_lcldata: "",
  my_home: NodeOs.homedir(),
  webdir: "",
  url_base: "/sabnzbd",
  windows: process.platform === "win32",
  macos: process.platform === "darwin",
  power_options: false,
  pp_pause_event: false,
  // The caller holds the key already; it is not repeated.
  apikey: "",
  new_release: null,
  new_rel_url: null,
  logfile: "",
  weblogfile: "",
  loglevel: "1",
  folders: [],
  configfn: "",
  warnings: [],
  delayed_assembler: 0,
  loadavg: NodeOs.loadavg()
    .map((n) => n.toFixed(2))
    .join(" | "),
  pystone: 0,
  downloaddir: options.completeDir,
  downloaddirspeed: 0,
  completedir: options.completeDir,
  completedirspeed: 0,
  internetbandwidth: 0,
  ...(options.skipDashboard
    ? {}
    : { active_socks5_proxy: null, localipv4: null, publicipv4: null, ipv6: null, dnslookup: null }),
  servers: []
})

/** SABnzbd's `paused`: its downloader's pause; here, every job waiting is paused. */
export const isPaused = (jobs: ReadonlyArray<IntakeItem>): boolean =>
  jobs.length > 0 && jobs.every((i) => i.state === "paused")

// ---------------------------------------------------------------------------------------

const GIB = 1024 ** 3

/** calc_age's form: "5d", "3h", "12m". */
const age = (seconds: number): string =>
  seconds >= 86_400
    ? `${Math.floor(seconds / 86_400)}d`
    : seconds >= 3600
      ? `${Math.floor(seconds / 3600)}h`
      : `${Math.floor(seconds / 60)}m`
