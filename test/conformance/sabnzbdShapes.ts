/**
 * The shapes of SABnzbd's API answers, key by key with each value's JSON type, read from
 * SABnzbd's source at tag 4.5.1, commit 3b72a005fd024e0db6d3af5eff1ed2c9f4cbe573
 * (github.com/sabnzbd/sabnzbd): sabnzbd/api.py (`build_header`, `build_queue`,
 * `build_status`, `build_file_list`, `_api_history_default`, `_api_server_stats`, the
 * `_api_*` modes' `report()` calls) and sabnzbd/database.py (the `history` table and
 * `unpack_history_info`, which drops `id` and `script_log` and adds `size`, `action_line`,
 * `loaded`, `archive` and `retry`). A type list is the types a key may have.
 */
import type { JsonType } from "./shapes.ts"

export const SABNZBD_SOURCE = "sabnzbd/sabnzbd@3b72a005fd024e0db6d3af5eff1ed2c9f4cbe573 (4.5.1)"

export type Shape = Readonly<Record<string, JsonType | ReadonlyArray<JsonType>>>

/** build_header(for_template=False). */
const HEADER: Shape = {
  version: "string",
  paused: "boolean",
  pause_int: "string",
  paused_all: "boolean",
  diskspace1: "string",
  diskspace2: "string",
  diskspace1_norm: "string",
  diskspace2_norm: "string",
  diskspacetotal1: "string",
  diskspacetotal2: "string",
  speedlimit: "string",
  speedlimit_abs: "string",
  have_warnings: "string",
  finishaction: ["null", "string"],
  quota: "string",
  have_quota: "boolean",
  left_quota: "string",
  cache_art: "string",
  cache_size: "string"
}

export const QUEUE: Shape = {
  ...HEADER,
  kbpersec: "string",
  speed: "string",
  mbleft: "string",
  mb: "string",
  sizeleft: "string",
  size: "string",
  noofslots_total: "number",
  noofslots: "number",
  start: "number",
  limit: "number",
  finish: "number",
  status: "string",
  timeleft: "string",
  slots: "array"
}

export const QUEUE_SLOT: Shape = {
  index: "number",
  nzo_id: "string",
  unpackopts: "string",
  priority: "string",
  script: "string",
  filename: "string",
  labels: "array",
  password: "string",
  cat: "string",
  mbleft: "string",
  mb: "string",
  size: "string",
  sizeleft: "string",
  percentage: "string",
  mbmissing: "string",
  direct_unpack: ["null", "number"],
  status: "string",
  timeleft: "string",
  avg_age: "string",
  time_added: "number"
}

export const HISTORY: Shape = {
  total_size: "string",
  month_size: "string",
  week_size: "string",
  day_size: "string",
  slots: "array",
  ppslots: "number",
  noofslots: "number",
  last_history_update: "number",
  version: "string"
}

export const HISTORY_SLOT: Shape = {
  completed: "number",
  name: "string",
  nzb_name: "string",
  category: "string",
  pp: "string",
  script: "string",
  report: "string",
  url: "string",
  status: "string",
  nzo_id: "string",
  storage: "string",
  path: "string",
  script_line: "string",
  download_time: "number",
  postproc_time: "number",
  stage_log: "array",
  downloaded: "number",
  completeness: ["null", "number"],
  fail_message: "string",
  url_info: "string",
  bytes: "number",
  meta: ["null", "string"],
  series: "string",
  md5sum: "string",
  password: "string",
  duplicate_key: "string",
  archive: "boolean",
  time_added: "number",
  size: "string",
  action_line: "string",
  loaded: "boolean",
  retry: "boolean"
}

/** build_status with skip_dashboard (the apps' fullstatus). */
export const STATUS: Shape = {
  ...HEADER,
  uptime: "string",
  color_scheme: "string",
  confighelpuri: "string",
  pid: "number",
  active_lang: "string",
  rtl: "boolean",
  my_lcldata: "string",
  my_home: "string",
  webdir: "string",
  url_base: "string",
  windows: "boolean",
  macos: "boolean",
  power_options: "boolean",
  pp_pause_event: "boolean",
  apikey: "string",
  new_release: ["null", "string"],
  new_rel_url: ["null", "string"],
  logfile: "string",
  weblogfile: "string",
  loglevel: "string",
  folders: "array",
  configfn: "string",
  warnings: "array",
  delayed_assembler: "number",
  loadavg: "string",
  pystone: "number",
  downloaddir: "string",
  downloaddirspeed: "number",
  completedir: "string",
  completedirspeed: "number",
  internetbandwidth: "number",
  servers: "array"
}

/** What build_status adds without skip_dashboard. */
export const STATUS_DASHBOARD: Shape = {
  ...STATUS,
  active_socks5_proxy: ["null", "string"],
  localipv4: ["null", "string"],
  publicipv4: ["null", "string"],
  ipv6: ["null", "string"],
  dnslookup: ["null", "string"]
}

export const FILE: Shape = {
  filename: "string",
  mbleft: "string",
  mb: "string",
  bytes: "string",
  age: "string",
  nzf_id: "string",
  status: "string"
}

export const SERVER_STATS: Shape = {
  total: "number",
  month: "number",
  week: "number",
  day: "number",
  servers: "object"
}
