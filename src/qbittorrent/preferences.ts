/**
 * app/preferences: the fields the *arr apps read (QBittorrentPreferences.cs), with values
 * that pass their checks, and qBittorrent's usual neighbours for other tools. Pure.
 *
 * - `save_path` is the mirror root as the app sees it (path_map applied).
 * - Global share limits are off and `max_ratio_act` is 0 (stop): the apps refuse a client
 *   whose limits remove torrents (act 1 or 3). Per-torrent limits are met at completion
 *   (torrentView.ts), which is what lets the apps remove imported items.
 * - `dht` is true: with DHT off the apps refuse magnets without trackers.
 * - `queueing_enabled` is true: the apps' "First" priority needs it (topPrio).
 */

import { type PathMap, toAppPath } from "../paths/pathMap.ts"
import type { ListenAddress } from "../server/ListenAddress.ts"
import { BAN_SECONDS, MAX_FAILED_LOGINS, SESSION_SECONDS } from "./Sessions.ts"

export const preferences = (options: {
  readonly mirrorRoot: string
  readonly pathMap: PathMap
  readonly listen: ListenAddress
  readonly username: string
}) => ({
  locale: "en",
  save_path: toAppPath(options.pathMap, options.mirrorRoot),
  temp_path_enabled: false,
  temp_path: "",
  auto_tmm_enabled: false,
  create_subfolder_enabled: true,
  add_stopped_enabled: false,
  start_paused_enabled: false,
  max_ratio_enabled: false,
  max_ratio: -1,
  max_ratio_act: 0,
  max_seeding_time_enabled: false,
  max_seeding_time: -1,
  max_inactive_seeding_time_enabled: false,
  max_inactive_seeding_time: -1,
  queueing_enabled: true,
  max_active_downloads: -1,
  max_active_torrents: -1,
  max_active_uploads: -1,
  dht: true,
  pex: true,
  lsd: true,
  encryption: 0,
  anonymous_mode: false,
  web_ui_address: options.listen.host ?? "*",
  web_ui_port: options.listen.port,
  web_ui_username: options.username,
  web_ui_max_auth_fail_count: MAX_FAILED_LOGINS,
  web_ui_ban_duration: BAN_SECONDS,
  web_ui_session_timeout: SESSION_SECONDS,
  bypass_local_auth: false,
  bypass_auth_subnet_whitelist_enabled: false,
  dl_limit: 0,
  up_limit: 0,
  alt_dl_limit: 0,
  alt_up_limit: 0
})
