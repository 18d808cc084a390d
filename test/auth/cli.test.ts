/** `dlsync login` and `dlsync logout` as commands: real config file, emulator, state dir. */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { Command } from "effect/cli"
import { TestClock, TestConsole } from "effect/testing"
import { makeTokenStore, TOKEN_FILE } from "../../src/auth/TokenStore.ts"
import { loginCommand } from "../../src/cli/login.ts"
import { logoutCommand } from "../../src/cli/logout.ts"
import { cliConfig, root } from "../../src/cli/root.ts"
import { authStateArea } from "../../src/emulator/oauthArea.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { seedTokens, useEmulator, useStateDir } from "./support/fixtures.ts"

const cli = (args: ReadonlyArray<string>) =>
  Command.runWith(root.pipe(Command.withSubcommands([loginCommand, logoutCommand])), { version: "test" })(args).pipe(
    Effect.provide(cliConfig)
  )

const writeConfig = (e: RunningEmulator, dir: string, clientId: string | undefined) => {
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(
    file,
    [
      "[service]",
      `base_url = "${e.baseUrl}"`,
      ...(clientId === undefined ? [] : [`client_id = "${clientId}"`]),
      "[mirror]",
      `root = "${Path.join(dir, "mirror")}"`,
      `state_dir = "${Path.join(dir, "state")}"`
    ].join("\n")
  )
  return file
}

const output = TestConsole.logLines.pipe(Effect.map((lines) => lines.map(String).join("\n")))

describe("dlsync login / logout", () => {
  it.effect("login prints the code, waits for approval, stores the tokens and prints the account", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const config = writeConfig(e, dir, e.clientId)
      const fiber = yield* Effect.forkChild(cli(["--config", config, "login"]))
      // The prompt shows the user code; the user approves it on another device.
      let code: string | undefined
      for (let i = 0; i < 2_000 && code === undefined; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        code = /code: ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(yield* output)?.[1]
      }
      if (code === undefined) assert.fail(`no user code printed in 10 s: ${yield* output}`)
      assert.isTrue(authStateArea(e.context).oauth.approveDevice(code))
      e.control.advanceClock(5_000)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(fiber)
      const text = yield* output
      assert.include(text, "/device?user_code=")
      assert.include(text, `(account ${e.state.primaryUser.id})`)
      assert.isTrue(Option.isSome(yield* makeTokenStore(Path.join(dir, "state")).read))
      assert.notInclude(text, "at_")
      assert.notInclude(text, "rt_")
    }).pipe(Effect.provide([NodeServices.layer, TestConsole.layer]))
  )

  it.effect("login without service.client_id is a configuration error", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const error = yield* Effect.flip(cli(["--config", writeConfig(e, dir, undefined), "login"]))
      assert.strictEqual(error._tag, "ConfigError")
      assert.include(error.message, "service.client_id")
    }).pipe(Effect.provide([NodeServices.layer, TestConsole.layer]))
  )

  it.effect("logout removes the token file, and says so when there is none", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const config = writeConfig(e, dir, e.clientId)
      yield* seedTokens(e, Path.join(dir, "state"))
      yield* cli(["--config", config, "logout"])
      assert.isFalse(Fs.existsSync(Path.join(dir, "state", TOKEN_FILE)))
      yield* cli(["--config", config, "logout"])
      const text = yield* output
      assert.include(text, "Signed out")
      assert.include(text, "Not signed in")
    }).pipe(Effect.provide([NodeServices.layer, TestConsole.layer]))
  )
})
