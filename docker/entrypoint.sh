#!/bin/sh
# dlsync's container entrypoint (run by tini as PID 1's child), linuxserver.io style:
#
#   started as root (the default)    the `dlsync` user takes PUID/PGID (default 1000:1000),
#                                    the config dir and state dir are created and handed
#                                    to it when their owner differs, then dlsync runs as
#                                    that user through su-exec;
#   started as another user          (`user: 1000:1000` in compose) nothing is changed:
#                                    dlsync runs as that user.
#
# The directories come from the variables dlsync reads, so they agree with what dlsync
# uses: DLSYNC_CONFIG (/config/config.toml), the state directory (DLSYNC_MIRROR_STATE_DIR
# if set, else the image's STATE_DIRECTORY, /config/state) and, when the user sets it,
# DLSYNC_MIRROR_ROOT (a mirror.root written in config.toml is dlsync's alone to check).
# The mirror is the user's data: it is never chowned, only checked for write access.
# Every DLSYNC_* variable passes through to dlsync unchanged.
# `exec` all the way: dlsync receives SIGTERM itself and shuts down gracefully.
set -eu

APP=/opt/dlsync/bin/dlsync.js
requested_ids=${PUID:-}${PGID:-}
PUID=${PUID:-1000}
PGID=${PGID:-1000}
UMASK=${UMASK:-022}

log() { printf 'dlsync-entrypoint: %s\n' "$*" >&2; }
fail() {
  log "$*"
  exit 78 # EX_CONFIG: systemd and compose should not restart into the same mistake
}

is_number() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac }

is_number "$PUID" || fail "PUID must be a number, got '$PUID'"
is_number "$PGID" || fail "PGID must be a number, got '$PGID'"
case $UMASK in [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) ;; *) fail "UMASK must be octal like 022, got '$UMASK'" ;; esac
umask "$UMASK"

config_file=${DLSYNC_CONFIG:-}
state_dir=${DLSYNC_MIRROR_STATE_DIR:-${STATE_DIRECTORY:-}}
mirror_root=${DLSYNC_MIRROR_ROOT:-}

# Configuration may come from DLSYNC_* variables alone: without the file, let dlsync
# search its defaults instead of failing on a path that was never created.
if [ -n "$config_file" ] && [ ! -e "$config_file" ]; then
  log "no $config_file: using DLSYNC_* variables only"
  unset DLSYNC_CONFIG
fi

# Hands a directory tree to the dlsync user when its top does not already belong to it.
own() {
  if [ "$(stat -c '%u:%g' "$1")" != "$PUID:$PGID" ]; then
    log "chown -R $PUID:$PGID $1"
    chown -R "$PUID:$PGID" "$1"
  fi
}

if [ "$(id -u)" = 0 ]; then
  [ "$PUID" != 0 ] || log "PUID=0: dlsync will run as root, which is not recommended"
  if [ "$(id -g dlsync)" != "$PGID" ]; then groupmod -o -g "$PGID" dlsync; fi
  if [ "$(id -u dlsync)" != "$PUID" ]; then usermod -o -u "$PUID" dlsync; fi

  if [ -n "$config_file" ]; then
    config_dir=$(dirname "$config_file")
    mkdir -p "$config_dir"
    own "$config_dir"
  fi
  if [ -n "$state_dir" ]; then
    mkdir -p "$state_dir"
    own "$state_dir"
    chmod 0700 "$state_dir" # the store and the tokens
  fi
  if [ -n "$mirror_root" ]; then
    mkdir -p "$mirror_root"
    if ! su-exec dlsync test -w "$mirror_root"; then
      log "$mirror_root is not writable by uid $PUID: chown it to $PUID:$PGID or set PUID/PGID to its owner"
    fi
  fi
  export HOME="${config_dir:-/config}"
  exec su-exec dlsync node "$APP" "$@"
fi

if [ -n "$requested_ids" ]; then log "running as uid $(id -u), not root: PUID/PGID are ignored"; fi
exec node "$APP" "$@"
