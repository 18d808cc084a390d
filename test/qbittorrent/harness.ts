/**
 * A qBittorrent API server on 127.0.0.1 (ephemeral port) over an in-memory intake whose
 * mirror root is a fresh temporary folder, for the length of the test's scope.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Context, Effect, Layer, Redacted } from "effect"
import type { QbittorrentSettings } from "../../src/config/qbittorrentSettings.ts"
import { Intake, type IntakeSource } from "../../src/intake/Intake.ts"
import { QbittorrentServer } from "../../src/qbittorrent/QbittorrentServer.ts"
import { type MemoryIntake, makeMemoryIntake } from "../support/MemoryIntake.ts"

export const USERNAME = "sonarr"
export const PASSWORD = "correct horse battery staple"

export interface Harness {
  readonly url: string
  readonly root: string
  readonly control: MemoryIntake
}

export const startQbit = (
  options: {
    /** The path map, given the mirror root the harness made. */
    readonly pathMap?: (root: string) => QbittorrentSettings["path_map"]
    readonly categories?: ReadonlyArray<string>
    readonly fetchUrl?: (url: string) => Effect.Effect<IntakeSource, string>
    /** Changes the intake the server sees (to make it fail). */
    readonly wrapIntake?: (intake: Intake["Service"]) => Intake["Service"]
  } = {}
) =>
  Effect.gen(function* () {
    const root = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-qbit-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    const control = makeMemoryIntake(root, options.categories ?? [])
    const layer = QbittorrentServer.layer({
      settings: {
        listen: { host: "127.0.0.1", port: 0 },
        username: USERNAME,
        password: Redacted.make(PASSWORD),
        path_map: options.pathMap?.(root) ?? []
      },
      mirrorRoot: root,
      ...(options.fetchUrl === undefined ? {} : { fetchUrl: options.fetchUrl })
    }).pipe(Layer.provide(Layer.succeed(Intake, options.wrapIntake?.(control.intake) ?? control.intake)))
    const context = yield* Layer.build(layer)
    const harness: Harness = { url: Context.get(context, QbittorrentServer).url, root, control }
    return harness
  })
