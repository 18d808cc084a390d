/**
 * `dlsync demo` (`npm run demo`, cli/demo.ts): the main job end to end, with nothing to set up. It
 * starts the emulator in this process with its sample library, mirrors the account into
 * a fresh folder, then changes the remote (rename, move, delete, add) and shows each
 * change mirrored, sends a magnet through the qBittorrent-compatible API as Sonarr would
 * and shows it land in `<mirror>/TV/` and reported complete (demoArr.ts), prints the tree
 * and exits, removing its temporary folder unless told to keep it (--keep, or --dir).
 *
 *   emulator (in process, port 0) ─► config (env-style, temp root + state) ─► engineLayer
 *        │                                                                     │
 *        └─ control: rename · move · delete · add ──► MirrorPass.run ◄─────────┘ (after each)
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { Clock, Console, Effect, Layer, Option, Redacted, References } from "effect"
import { ApiObserver } from "../api/ApiHttp.ts"
import { AppStateWriter } from "../appstate/AppStateWriter.ts"
import { ONCE_DRAIN_MS, RunKind } from "../appstate/mirrorAppState.ts"
import { TokenStore } from "../auth/TokenStore.ts"
import { loadConfig } from "../config/loadConfig.ts"
import { type RunningEmulator, startEmulator } from "../emulator/server.ts"
import { ACTION_WORDS, count, MirrorPass, type PassReport } from "../engine/MirrorPass.ts"
import { engineLayer } from "../layers/engine.ts"
import { forEachTransferEvent } from "../transfer/ProgressTracker.ts"
import { formatBytes } from "../transfer/progressFormat.ts"
import { VERSION } from "../version.ts"
import { arrStep, demoQbittorrentLayer } from "./demoArr.ts"

export const demo = Effect.fn("demo")(function* (flags: {
  readonly dir: Option.Option<string>
  readonly keep: boolean
}) {
  yield* Console.log(`dlsync ${VERSION} — demo: mirroring a sample account from the built-in emulator\n`)
  const emu = yield* Effect.acquireRelease(
    Effect.promise(() => startEmulator({ library: "demo", control: true })),
    (running) => Effect.promise(() => running.close())
  )
  // A folder of its own making goes at the end, however the demo ends, unless --keep.
  const removeAtEnd = Option.isNone(flags.dir) && !flags.keep
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => Option.getOrElse(flags.dir, () => Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "dlsync-demo-")))),
    (made) => (removeAtEnd ? Effect.sync(() => Fs.rmSync(made, { recursive: true, force: true })) : Effect.void)
  )
  const root = NodePath.join(dir, "mirror")
  const configFile = NodePath.join(dir, "demo.toml")
  Fs.mkdirSync(root, { recursive: true })
  Fs.writeFileSync(configFile, "# the demo is configured through the environment\n")
  const stateDir = NodePath.join(dir, "state")
  const config = yield* loadConfig({
    path: Option.some(configFile),
    env: {
      DLSYNC_SERVICE_BASE_URL: emu.baseUrl,
      DLSYNC_MIRROR_ROOT: root,
      DLSYNC_MIRROR_STATE_DIR: stateDir,
      DLSYNC_TRANSFERS_MIN_FREE_SPACE: "0",
      // Its own emulator: the service's whole per-app budget (the default leaves room for other devices).
      DLSYNC_APP_STATE_MAX_REQUESTS_PER_MINUTE: "1200"
    },
    cwd: dir
  })
  // Signed in as `dlsync login` would leave it: the emulator's ready OAuth pair.
  const now = yield* Clock.currentTimeMillis
  yield* TokenStore.use((tokens) =>
    tokens.write({
      accessToken: Redacted.make(emu.accessToken),
      refreshToken: Redacted.make(emu.refreshToken),
      expiresAtMs: now + 3_600_000,
      lifetimeSeconds: 3_600,
      obtainedAtMs: now,
      authUrl: emu.authUrl,
      clientId: emu.clientId,
      scopes: config.service.scopes
    })
  ).pipe(Effect.provide(TokenStore.layer(stateDir)))
  yield* Console.log(`emulator: ${emu.baseUrl}`)
  yield* Console.log(`mirror:   ${root}\n`)

  yield* Effect.gen(function* () {
    const pass = yield* MirrorPass
    const step = Effect.fnUntraced(function* () {
      // Each step's download lines are all printed before its summary.
      const report = yield* Effect.scoped(
        Effect.andThen(
          showDownloads,
          pass.run({
            allowBigDelete: false,
            fullListing: true,
            probeFeed: false,
            onPlan: (s) =>
              s.downloads > 0
                ? Console.log(`  downloading ${count(s.downloads, "file")} (${formatBytes(s.bytes)})…`)
                : Effect.void
          })
        )
      )
      yield* Console.log(`  ${describe(report)}`)
      for (const f of report.failures) yield* Console.log(`  ! ${f.path}: ${f.reason}`)
      yield* Console.log("")
    })

    yield* Console.log("1. First mirror of the whole account")
    yield* step()
    const changes = remoteChanges(emu)
    for (const change of changes) {
      yield* Console.log(`${change.n}. Remote: ${change.what}`)
      yield* Effect.sync(change.apply)
      yield* step()
    }
    yield* Console.log(`${changes.length + 2}. Sonarr sends a release through dlsync's qBittorrent API`)
    yield* arrStep(
      emu,
      Effect.scoped(
        Effect.andThen(
          showDownloads,
          Effect.asVoid(pass.run({ allowBigDelete: false, fullListing: true, probeFeed: false }))
        )
      )
    )
    yield* Console.log("")
    // Within the demo, not as log lines after its summary when the run ends.
    yield* Console.log("Recording in each file's app state what this device mirrored…\n")
    yield* (yield* AppStateWriter).drainWithin(ONCE_DRAIN_MS)
    yield* Console.log("The mirror now:")
    yield* Console.log(renderTree(root))
    if (removeAtEnd) {
      yield* Console.log(`\nEverything above was in ${root}`)
      yield* Console.log("(removed; `dlsync demo --keep` keeps it to look around in)")
    } else {
      yield* Console.log(`\nEverything above is in ${root}`)
      yield* Console.log(
        `(state in ${NodePath.join(dir, "state")}; the folder is yours: remove it when done: rm -rf ${dir})`
      )
    }
  }).pipe(
    Effect.provide(
      demoQbittorrentLayer(config).pipe(
        Layer.provideMerge(engineLayer(config)),
        Layer.provide([ApiObserver.none, RunKind.daemon])
      )
    ),
    // The intake's and the API's info lines would interleave with the demo's own.
    Effect.provideService(References.MinimumLogLevel, "Warn")
  )
}, Effect.scoped)

// ---------------------------------------------------------------------------------------

/** A line per file downloaded or parked, for the length of the scope. */
const showDownloads = forEachTransferEvent((event) =>
  event._tag === "Finished"
    ? Console.log(`    ✓ ${event.name}  (${formatBytes(event.size)} in ${event.elapsedMs} ms)`)
    : event._tag === "Parked"
      ? Console.log(`    ✗ ${event.name}: ${event.reason}`)
      : Effect.void
)

interface RemoteChange {
  readonly n: number
  readonly what: string
  readonly apply: () => void
}

/** The demo's remote changes, found by name in the sample library. */
const remoteChanges = (emu: RunningEmulator): ReadonlyArray<RemoteChange> => {
  const tree = emu.state.primaryUser.tree
  const byName = (name: string) => {
    for (const item of tree.values()) if (item.name === name) return item
    throw new Error(`the demo library has no ${name}`)
  }
  const welcome = byName("Welcome.txt")
  const notes = byName("notes.txt")
  const movies = byName("Movies")
  const backup = byName("backup.zip")
  return [
    {
      n: 2,
      what: "rename Welcome.txt → Read me first.txt",
      apply: () => void emu.control.rename(welcome.id, "Read me first.txt")
    },
    { n: 3, what: "move Documents/notes.txt into Movies/", apply: () => void emu.control.move(notes.id, movies.id) },
    {
      n: 4,
      what: "delete Documents/backup.zip (goes to .dlsync/trash)",
      apply: () => void emu.control.remove([backup.id])
    },
    {
      n: 5,
      what: "add Movies/New Arrival (2026).mkv",
      apply: () =>
        void emu.control.addFile({ name: "New Arrival (2026).mkv", parentId: movies.id, sizeBytes: 3_000_000 })
    }
  ]
}

const describe = (report: PassReport): string => {
  const done = Object.entries(report.done).map(([tag, n]) => `${n} ${ACTION_WORDS[tag] ?? tag}`)
  if (report.downloaded > 0) done.push(`${report.downloaded} downloaded (${formatBytes(report.downloadedBytes)})`)
  const locked = report.skipped.locked ?? 0
  if (locked > 0) done.push(`${locked} locked on the remote (fetched once unlocked)`)
  return done.length === 0 ? "nothing to do" : done.join(", ")
}

/** An indented listing of `root` (without `.dlsync`). */
const renderTree = (root: string): string => {
  const lines: Array<string> = []
  const walk = (dir: string, depth: number) => {
    for (const name of Fs.readdirSync(dir).sort()) {
      if (depth === 0 && name === ".dlsync") continue
      const abs = NodePath.join(dir, name)
      const stat = Fs.lstatSync(abs)
      lines.push(`${"  ".repeat(depth + 1)}${name}${stat.isDirectory() ? "/" : `  (${formatBytes(stat.size)})`}`)
      if (stat.isDirectory()) walk(abs, depth + 1)
    }
  }
  walk(root, 0)
  return lines.join("\n")
}
