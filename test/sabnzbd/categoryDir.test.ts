/**
 * get_config's category `dir` is relative to complete_dir for every category folder inside
 * the mirror root, a name that merely starts with two dots (`..hidden`) included: the one
 * containment rule of fs/containment.ts.
 */
import * as Http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Intake } from "../../src/intake/Intake.ts"
import { SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { makeMemoryIntake } from "../intake/memoryIntake.ts"
import { readConfig } from "./sonarrReads.ts"

const KEY = "0123456789abcdef0123456789abcdef"
const ROOT = "/srv/dlsync"

const getText = (url: URL) =>
  Effect.promise(
    () =>
      new Promise<string>((resolve, reject) => {
        Http.get(url, (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => {
            text += chunk
          })
          res.on("end", () => resolve(text))
        }).on("error", reject)
      })
  )

describe("SABnzbd get_config: category folders", () => {
  it.effect("a category named ..hidden is a folder inside complete_dir", () =>
    Effect.gen(function* () {
      const memory = yield* makeMemoryIntake(ROOT)
      const layer = SabnzbdServer.layer({
        settings: {
          listen: { host: "127.0.0.1", port: 0 },
          apiKey: Option.some(Redacted.make(KEY)),
          pathMap: [],
          categories: ["..hidden", "tv"]
        },
        root: ROOT
      }).pipe(Layer.provideMerge(Layer.succeed(Intake, memory.intake)))
      const text = yield* Effect.gen(function* () {
        const server = yield* SabnzbdServer
        const url = new URL("/api", server.url ?? assert.fail("the surface is off"))
        for (const [k, v] of Object.entries({ mode: "get_config", apikey: KEY, output: "json" }))
          url.searchParams.set(k, v)
        return yield* getText(url)
      }).pipe(Effect.provide(layer))
      const categories = readConfig(text).categories
      assert.deepStrictEqual(
        categories.filter((c) => c.name !== "*"),
        [
          { name: "..hidden", dir: "..hidden", fullPath: `${ROOT}/..hidden` },
          { name: "tv", dir: "tv", fullPath: `${ROOT}/tv` }
        ]
      )
    })
  )
})
