/**
 * get_config's category `dir` is relative to complete_dir for every category folder inside
 * the mirror root, a name that merely starts with two dots (`..hidden`) included: the one
 * containment rule of fs/containment.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { Intake } from "../../src/intake/Intake.ts"
import { answer } from "../../src/sabnzbd/sabnzbdApi.ts"
import { jsonOf } from "../../src/sabnzbd/sabnzbdOutput.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"
import { readConfig } from "./sonarrReads.ts"

const KEY = "0123456789abcdef0123456789abcdef"
const ROOT = "/srv/dlsync"

describe("SABnzbd get_config: category folders", () => {
  it.effect("a category named ..hidden is a folder inside complete_dir", () =>
    Effect.gen(function* () {
      const memory = makeMemoryIntake(ROOT, ["..hidden", "tv"])
      const config = yield* answer(
        { apiKey: Redacted.make(KEY), root: ROOT, pathMap: [] },
        {
          params: new Map([
            ["mode", "get_config"],
            ["apikey", KEY]
          ]),
          files: []
        }
      ).pipe(Effect.provideService(Intake, memory.intake))
      const categories = readConfig(JSON.stringify(jsonOf(config))).categories
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
