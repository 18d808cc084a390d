import { Command, Flag } from "effect/cli"

/** `dlsync`: the root command; its shared flags are accepted by every subcommand. */
export const root = Command.make("dlsync").pipe(
  Command.withSharedFlags({
    config: Flag.String("config").pipe(
      Flag.withDescription(
        "Configuration file (default: $DLSYNC_CONFIG, $XDG_CONFIG_HOME/dlsync/config.toml, /etc/dlsync/config.toml)"
      ),
      Flag.withMetavar("FILE"),
      Flag.optional
    )
  }),
  Command.withDescription("Keep a Download Service account mirrored on local disk.")
)
