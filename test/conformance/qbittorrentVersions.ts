/**
 * What qBittorrent 5.0 (WebAPI 2.11) changed from 4.5 (WebAPI 2.8.19), as far as the answers
 * dlsync gives go: read from qBittorrent's source at release-4.5.2 (ee5ae42) and
 * release-5.0.5 (fb72edb), and checked here against Debian's qbittorrent-nox 4.5.2. dlsync
 * answers as 5.0.5; the README's version table says the same in prose.
 */

/** Keys 5.0 added to each answer (4.5 has none of them). */
export const ADDED_IN_5_0 = {
  buildInfo: ["platform"],
  torrentInfo: [
    "comment",
    "has_metadata",
    "inactive_seeding_time_limit",
    "max_inactive_seeding_time",
    "popularity",
    "private",
    "reannounce",
    "root_path"
  ],
  properties: ["has_metadata", "popularity", "private"],
  serverState: ["use_subcategories"],
  preferences: [
    "add_stopped_enabled",
    "add_to_top_of_queue",
    "app_instance_name",
    "bdecode_depth_limit",
    "bdecode_token_limit",
    "current_interface_name",
    "delete_torrent_content_files",
    "dht_bootstrap_nodes",
    "file_log_age",
    "file_log_age_type",
    "file_log_backup_enabled",
    "file_log_delete_old",
    "file_log_enabled",
    "file_log_max_size",
    "file_log_path",
    "i2p_address",
    "i2p_enabled",
    "i2p_inbound_length",
    "i2p_inbound_quantity",
    "i2p_mixed_mode",
    "i2p_outbound_length",
    "i2p_outbound_quantity",
    "i2p_port",
    "ignore_ssl_errors",
    "mark_of_the_web",
    "max_inactive_seeding_time",
    "max_inactive_seeding_time_enabled",
    "merge_trackers",
    "proxy_bittorrent",
    "proxy_misc",
    "proxy_rss",
    "python_executable_path",
    "rss_fetch_delay",
    "socket_receive_buffer_size",
    "socket_send_buffer_size",
    "ssl_enabled",
    "ssl_listen_port",
    "torrent_content_remove_option",
    "torrent_file_size_limit",
    "use_unwanted_folder"
  ]
} as const satisfies Readonly<Record<string, ReadonlyArray<string>>>

/** Keys 4.5 has and 5.0 dropped. */
export const REMOVED_IN_5_0 = {
  preferences: ["proxy_torrents_only", "start_paused_enabled"]
} as const satisfies Readonly<Record<string, ReadonlyArray<string>>>

/** Calls only one of the two versions answers (the other: 404). */
export const CALLS = {
  onlyIn4_5: ["torrents/pause", "torrents/resume"],
  onlyIn5_0: ["torrents/count", "torrents/stop", "torrents/start"]
} as const
