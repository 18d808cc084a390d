/**
 * A SABnzbd surface on an ephemeral loopback port over a fresh in-memory intake, and the
 * requests Sonarr makes to it (Sonarr's SabnzbdProxy: the key and the mode in the query).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Intake } from "../../src/intake/Intake.ts"
import { SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { type MemoryIntake, makeMemoryIntake } from "../support/MemoryIntake.ts"

export const KEY = "0123456789abcdef0123456789abcdef"

export const NZB = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nzb PUBLIC "-//newzBin//DTD NZB 1.1//EN" "http://www.newzbin.com/DTD/nzb/nzb-1.1.dtd">
<nzb xmlns="http://www.newzbin.com/DTD/2003/nzb"><file poster="p" date="1" subject="s"><groups><group>a.b</group></groups><segments><segment bytes="1" number="1">x@y</segment></segments></file></nzb>`

/**
 * A SABnzbd surface on an ephemeral loopback port over a fresh in-memory intake whose mirror
 * root is a fresh temporary folder, for the length of `body`.
 */
export const withSurface = <A, E>(
  body: (surface: {
    readonly base: string
    readonly memory: MemoryIntake
    readonly root: string
  }) => Effect.Effect<A, E, Intake>,
  options: {
    /** The path map, given the mirror root the harness made. */
    readonly pathMap?: (root: string) => ReadonlyArray<readonly [string, string]>
    readonly maxBodyBytes?: number
  } = {}
) =>
  Effect.gen(function* () {
    const root = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-sabnzbd-"))),
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    )
    // The categories come from sabnzbd.categories: the server makes them in the intake.
    const memory = makeMemoryIntake(root)
    const layer = SabnzbdServer.layer({
      settings: {
        listen: { host: "127.0.0.1", port: 0 },
        apiKey: Option.some(Redacted.make(KEY)),
        pathMap: options.pathMap?.(root) ?? [],
        categories: ["tv", "movies"]
      },
      root,
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes })
    }).pipe(Layer.provideMerge(Layer.succeed(Intake, memory.intake)))
    return yield* Effect.gen(function* () {
      const server = yield* SabnzbdServer
      return yield* body({ base: server.url ?? assert.fail("the surface is off"), memory, root })
    }).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

/** Sonarr's BuildRequest: `{base}/api?mode=…&<params>&apikey=…&output=json`. */
export const sonarrUrl = (base: string, mode: string, params: Record<string, string | number> = {}, key = KEY) => {
  const url = new URL("/api", base)
  url.searchParams.set("mode", mode)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v))
  url.searchParams.set("apikey", key)
  url.searchParams.set("output", "json")
  return url
}

export const get = (url: URL) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers: { accept: "application/json" } })
    return { status: response.status, text: await response.text() }
  })

export const addfile = (base: string, title: string, content: string, category: string) =>
  Effect.promise(async () => {
    const form = new FormData()
    form.append("name", new Blob([content], { type: "application/x-nzb" }), `${title}.nzb`)
    const response = await fetch(sonarrUrl(base, "addfile", { cat: category, priority: -100 }), {
      method: "POST",
      body: form
    })
    return { status: response.status, text: await response.text() }
  })
