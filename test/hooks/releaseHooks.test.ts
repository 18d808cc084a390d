/**
 * The release events reach a real hook: a command of the user's, run as a child process
 * without a shell, gets release_complete's and release_failed's facts (name, category, the
 * surface, path or reason) in its environment.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MirrorEvents, publishEvent } from "../../src/events/MirrorEvents.ts"
import { hooksLayer } from "../../src/hooks/Hooks.ts"

const NODE = process.execPath

/** A hook that appends its DLSYNC_* environment as one JSON line to `out`. */
const recorder = (out: string) => [
  NODE,
  "-e",
  `const fs=require("fs"); fs.appendFileSync(process.argv[1], JSON.stringify(Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("DLSYNC_")))) + "\\n")`,
  out
]

describe("release events in hooks", () => {
  it.live(
    "release_complete and release_failed run their hooks with the release's name, category and path or reason",
    () =>
      Effect.gen(function* () {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-release-hook-"))
        const [complete, failed] = [Path.join(dir, "complete.jsonl"), Path.join(dir, "failed.jsonl")]
        yield* Effect.scoped(
          Effect.provide(
            Effect.gen(function* () {
              yield* publishEvent({
                _tag: "release_complete",
                id: "btih:0123456789abcdef0123456789abcdef01234567",
                name: "Show.S01E01.1080p",
                category: "tv",
                via: "qbittorrent",
                path: "tv/Show.S01E01.1080p",
                absolutePath: "/mirror/tv/Show.S01E01.1080p",
                size: 2_000_000,
                files: 2
              })
              yield* publishEvent({
                _tag: "release_failed",
                id: "sha256:ab",
                name: "Film.2024",
                category: "",
                via: "sabnzbd",
                reason: "the service failed it: missing articles"
              })
            }),
            Layer.fresh(
              hooksLayer(
                "/mirror",
                [
                  { event: "release_complete", command: recorder(complete), timeout: 10_000 },
                  { event: "release_failed", command: recorder(failed), timeout: 10_000 }
                ],
                { PATH: process.env.PATH }
              ).pipe(Layer.provideMerge(MirrorEvents.layer))
            )
          )
        )
        // The scope's end waits for the hooks owed, so both files are written by now.
        assert.deepStrictEqual(JSON.parse(Fs.readFileSync(complete, "utf8")), {
          DLSYNC_EVENT: "release_complete",
          DLSYNC_ROOT: "/mirror",
          DLSYNC_RELEASE_ID: "btih:0123456789abcdef0123456789abcdef01234567",
          DLSYNC_NAME: "Show.S01E01.1080p",
          DLSYNC_CATEGORY: "tv",
          DLSYNC_VIA: "qbittorrent",
          DLSYNC_PATH: "/mirror/tv/Show.S01E01.1080p",
          DLSYNC_RELATIVE_PATH: "tv/Show.S01E01.1080p",
          DLSYNC_SIZE: "2000000",
          DLSYNC_COUNT: "2"
        })
        assert.deepStrictEqual(JSON.parse(Fs.readFileSync(failed, "utf8")), {
          DLSYNC_EVENT: "release_failed",
          DLSYNC_ROOT: "/mirror",
          DLSYNC_RELEASE_ID: "sha256:ab",
          DLSYNC_NAME: "Film.2024",
          DLSYNC_CATEGORY: "",
          DLSYNC_VIA: "sabnzbd",
          DLSYNC_REASON: "the service failed it: missing articles"
        })
      })
  )
})
