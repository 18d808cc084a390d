#!/bin/sh
":" //; node=$(readlink -f "$0") && node="${node%/bin/*}/node_modules/node/bin/node"
":" //; [ -x "$node" ] || exec node "$0" "$@"
":" //; case " $NODE_OPTIONS " in *" --max-semi-space-size"*) exec "$node" "$0" "$@" ;; esac
":" //; export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX-2}" MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_-32768}"
":" //; exec "$node" --max-semi-space-size=1 --optimize-for-size --max-opt=1 --liftoff-only --no-concurrent-sparkplug "$0" "$@"
// The lines above are shell and JavaScript at once: to Node, string statements and comments;
// to the shell, which runs this file when it is started as a program (systemd's ExecStart=,
// `dlsync` on PATH, npx), a start of the Node 24 that `npm ci` installed beside dlsync
// (node_modules/node, which the systemd units and npm scripts put first on PATH anyway) with
// the memory settings described at V8_FLAGS below: Node starts once, not twice (`run --once`
// with nothing to do: 0.62 → 0.52 CPU s, 6 pairs). Not the `node` on PATH: it may be an older
// one that refuses --max-opt (Node 18: "bad option") and its version is unknown without a start.
// Without that Node (an install without devDependencies) or started as `node bin/dlsync.js`,
// the JavaScript below runs alone and re-executes itself with the same settings: keep the two
// lists alike (test/cli/launcher.test.ts compares them).
// Launcher. On Node >= 24 it runs the bundle `dist/dlsync.mjs` (made by `npm ci` through
// `prepare`, see scripts/build.ts: it takes half the memory of the sources) when that is
// newer than every source, else the TypeScript sources themselves (type stripping), so an
// edited source never runs stale. The bundle's chunks (dist/chunks/) are written before
// it, so its time stands for theirs. On an older system Node (e.g. 20 on a fresh NAS), it
// re-runs itself on the Node 24 runtime that `npm ci` installed as a devDependency.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs"
import * as Module from "node:module"
import { fileURLToPath } from "node:url"

const major = Number(process.versions.node.split(".")[0])

/**
 * Memory settings, read only at start, so the launcher re-executes itself with them (the same
 * process: execve). Measured with bench/memory.ts and an idle `dlsync run` given 3 × 10,000
 * HTTP requests (RSS MB: idle → 15 s after → 45 s after):
 * - 1 MiB V8 semi-spaces instead of 16 MiB (grown under load and kept): a daemon's
 *   allocations are short-lived. Mirroring 2,000 files while the account changed twice a
 *   second, RSS grew 250 → 372 MB in a minute with the default and stayed at 228–230 with it.
 * - --optimize-for-size: V8 grows its old generation by less and gives it back sooner
 *   (99 → 116 → 110 without it, 96 → 96 → 104 with it and the next setting).
 * - --max-opt=1: V8 compiles hot code with Sparkplug (its baseline compiler) only, neither
 *   TurboFan nor Maglev. TurboFan's compiler and output cost an idle daemon ≈ 5 MB (84.5 →
 *   79.5 MB). Maglev's compile jobs allocate on the main thread's heap, and a burst of new
 *   work (3 × 10,000 requests to the status server: 322 jobs) left it fragmented: the server
 *   came back 13 % above idle with Maglev, 4–5 % without (2 pairs of bench/memory.ts), idle
 *   77 MB instead of 79–80, and indexing 100,000 items peaked at 91 MB instead of 103. CPU
 *   without / with Maglev: indexing 1.00 (0.70–1.18), 4 pairs (bench/index.ts
 *   --node-flags-b); 2 GiB over https, whole process, 1.04 (0.99–1.07), wall 1.02, 6 pairs
 *   (bench/run.ts --dlsync-node-flags). The last of flags given wins: `node --max-opt=999
 *   bin/dlsync.js` has them all.
 * - --liftoff-only: WebAssembly (undici's HTTP parser, llhttp, which the API client used
 *   until session 11 and the qBittorrent intake still uses to fetch a .torrent URL) runs on
 *   V8's baseline compiler only. Its optimising compiler otherwise recompiled the whole
 *   parser on a background thread at the first request, a 19 MB spike in memory (peak RSS
 *   of `run --once` over 2 GiB https, 4 connections: 113 → 94 MB; defaults, 3 pairs:
 *   114–121 → 101 MB, wall 3.7–3.9 → 3.6–3.7 s, CPU 4.2–4.5 → 3.5–3.9 s), for a few responses.
 * - --no-concurrent-sparkplug: Sparkplug, dlsync's top tier with --max-opt=1, compiles on the
 *   main thread, not on one of V8's worker threads. Node's exit joins those threads, and a
 *   compile job that needs a garbage collection for its code waits for the main thread, which
 *   waits for it: the process never exits (nodejs/node#54918, open). Once in a full run of the
 *   suite, `run --once` printed its error and hung in exit with one V8 worker left, as that
 *   issue's traces show; a hung `--once` from cron holds the instance lock until it is killed.
 *   No cost measured: an empty pass 0.45 / 0.44 CPU s (14 pairs), 2 GiB over https 3.93 / 3.98
 *   (8 pairs).
 * The re-execution costs a second start of Node (`run --once` with nothing to do: 0.43 CPU s
 * given the flags, 0.56 without, 10 pairs), which the shell lines at the top spare a started
 * program. It stays for `node bin/dlsync.js`: V8 freezes its flags once it runs
 * (`v8.setFlagsFromString("--max-opt=1")` then changes nothing), glibc reads its variables at
 * start, and a shebang that passes them (`#!/usr/bin/env -S node …`) fails on BusyBox's env,
 * which many NAS systems have.
 * - MALLOC_ARENA_MAX=2: glibc otherwise gives each thread (V8's compilers, libuv's pool) an
 *   arena of its own that keeps what it freed (17 MB in one after the requests).
 * - MALLOC_MMAP_THRESHOLD_=32768: glibc maps blocks of 32 KiB and more on their own and
 *   unmaps them when freed. V8 parses the code it loads in such blocks; from glibc's heap
 *   they were freed into holes it could not give back: an idle daemon held 15 MB of heap
 *   there, 5 MB with it (RSS 92 → 83 MB). Reads from the network into buffers of their own
 *   (undici's https path) pay an mmap each; plain-HTTP transfers read into reused buffers.
 * Both are glibc's; musl (the container image) ignores them. Flags or variables already given
 * are kept as they are.
 */
const V8_FLAGS = [
  "--max-semi-space-size=1",
  "--optimize-for-size",
  "--max-opt=1",
  "--liftoff-only",
  "--no-concurrent-sparkplug"
]
const MALLOC_ARENA_MAX = "2"
const MALLOC_MMAP_THRESHOLD_ = "32768"

const hasV8Flags = () =>
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((a) =>
    a.startsWith("--max-semi-space-size")
  )

/** The newest modification time under `dir` (recursive); 0 when it does not exist (the image). */
const newestUnder = (dir) => {
  let newest = 0
  if (!existsSync(dir)) return newest
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs)
  }
  return newest
}

/** When the bundle was built, if it is newer than every source and the lock file; else undefined. */
const freshBundleTime = (bundle) => {
  const built = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs
  if (built === undefined) return undefined
  const src = fileURLToPath(new URL("../src", import.meta.url))
  const lock = fileURLToPath(new URL("../package-lock.json", import.meta.url))
  const fresh = built >= newestUnder(src) && built >= (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0)
  return fresh ? built : undefined
}

// execve exists on Linux and macOS; elsewhere dlsync runs with V8's defaults.
if (major >= 24 && !hasV8Flags() && typeof process.execve === "function" && process.platform !== "win32") {
  process.execve(
    process.execPath,
    [process.execPath, ...V8_FLAGS, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, ...process.env }
  )
}

/**
 * Where V8's code cache of what dlsync loads is kept (Node's compile cache): with it a start
 * skips compiling its 3 MB of JavaScript (`run --once` with nothing to do: 0.93 → 0.80 CPU s,
 * 10 alternated pairs). The user's own cache directory, never a shared one such as /tmp,
 * where a planted cache file would run as dlsync: systemd's CacheDirectory=
 * ($CACHE_DIRECTORY), else $XDG_CACHE_HOME/dlsync or ~/.cache/dlsync; none when that base
 * does not exist (a system user's HOME=/nonexistent). NODE_COMPILE_CACHE, when given, is
 * Node's own choice; NODE_DISABLE_COMPILE_CACHE=1 turns it off. An entry is keyed by the
 * code's hash, so an update never runs a stale one.
 */
const compileCacheDir = (env) => {
  if (env.CACHE_DIRECTORY) return below(env.CACHE_DIRECTORY.split(":")[0], ["compile-cache"])
  if (env.XDG_CACHE_HOME) return below(env.XDG_CACHE_HOME, ["dlsync", "compile-cache"])
  if (env.HOME) return below(env.HOME, [".cache", "dlsync", "compile-cache"])
  return undefined
}

/**
 * `base`/`levels`, made one level at a time (0700) below an existing directory; undefined
 * when one cannot be. Not `mkdir -p`: Node's loops for good on a path under /proc.
 */
const below = (base, levels) => {
  try {
    if (!statSync(base).isDirectory()) return undefined
    let dir = base
    for (const level of levels) {
      dir = `${dir}/${level}`
      if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 })
    }
    return statSync(dir).isDirectory() ? dir : undefined
  } catch {
    return undefined
  }
}

/**
 * The cache of the build that runs, a folder of `cacheDir` (`bundle-` and the bundle's
 * modification time, or `sources`); the folders of other builds are removed. Node never removes
 * an entry, and each build adds its own (≈ 4 MB): without this, every update of an image or a
 * checkout added to the user's cache for good. A dlsync of another build still running (a daemon
 * not yet restarted) loses only its cache.
 */
const buildCacheDir = (cacheDir, build) => {
  try {
    for (const other of readdirSync(cacheDir)) {
      if (other !== build) rmSync(`${cacheDir}/${other}`, { recursive: true, force: true })
    }
  } catch {
    return undefined
  }
  return below(cacheDir, [build])
}

/** Start-up is over by then (the first pass has begun): what loads later is a little. */
const COMPILE_CACHE_FLUSH_MS = 10_000

if (major >= 24) {
  const bundle = fileURLToPath(new URL("../dist/dlsync.mjs", import.meta.url))
  const built = freshBundleTime(bundle)
  const cacheDir = compileCacheDir(process.env)
  if (!process.env.NODE_COMPILE_CACHE && cacheDir !== undefined) {
    const build = built === undefined ? "sources" : `bundle-${Math.trunc(built)}`
    const dir = buildCacheDir(cacheDir, build)
    if (dir !== undefined) Module.enableCompileCache(dir)
  }
  await import(built === undefined ? "../src/main.ts" : bundle)
  // Node holds the cache's entries in memory until it writes them out, at exit by default: a
  // daemon writes them once its start is over and lets them go (idle RSS 78 → 76 MB, as
  // without the cache; 3 pairs).
  setTimeout(() => Module.flushCompileCache(), COMPILE_CACHE_FLUSH_MS).unref()
} else {
  const bundled = fileURLToPath(new URL("../node_modules/node/bin/node", import.meta.url))
  if (!existsSync(bundled)) {
    process.stderr.write(
      `dlsync needs Node.js 24 or newer (this is ${process.version}); run \`npm ci\` to install it locally.\n`
    )
    process.exit(78)
  }
  const child = spawn(bundled, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" })
  const forward = (signal) => child.kill(signal)
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"]
  for (const signal of signals) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const s of signals) process.off(s, forward)
    // Die of the same signal as the child so that supervisors see the truth.
    if (signal) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
}
