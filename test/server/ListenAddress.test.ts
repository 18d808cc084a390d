import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import {
  DEFAULT_LISTEN,
  DEFAULT_LISTEN_ADDRESS,
  formatListen,
  isLoopback,
  type ListenSetting,
  ListenSettingFromString,
  parseListen
} from "../../src/server/ListenAddress.ts"

const ok = (input: unknown): ListenSetting => {
  const result = parseListen(input)
  if (Result.isFailure(result)) assert.fail(`${JSON.stringify(input)}: ${result.failure}`)
  return result.success
}

const refused = (input: unknown): string => {
  const result = parseListen(input)
  if (Result.isSuccess(result))
    assert.fail(`${JSON.stringify(input)} was accepted as ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("parseListen", () => {
  it("the default is loopback only", () => {
    const setting = ok(DEFAULT_LISTEN)
    assert.deepStrictEqual(setting, { host: "127.0.0.1", port: 7660 })
    assert.deepStrictEqual(setting, DEFAULT_LISTEN_ADDRESS)
    assert.isTrue(setting !== "off" && isLoopback(setting))
  })

  it("reads every documented form", () => {
    assert.strictEqual(ok("off"), "off")
    assert.strictEqual(ok(" OFF "), "off")
    assert.deepStrictEqual(ok("127.0.0.1:9000"), { host: "127.0.0.1", port: 9000 })
    assert.deepStrictEqual(ok("0.0.0.0:7660"), { host: "0.0.0.0", port: 7660 })
    assert.deepStrictEqual(ok("localhost:7660"), { host: "localhost", port: 7660 })
    assert.deepStrictEqual(ok("nas.local:7660"), { host: "nas.local", port: 7660 })
    assert.deepStrictEqual(ok("[::1]:7660"), { host: "::1", port: 7660 })
    assert.deepStrictEqual(ok("[::]:1"), { host: "::", port: 1 })
    assert.deepStrictEqual(ok("  192.168.1.20:65535 "), { host: "192.168.1.20", port: 65535 })
  })

  it('every interface only when written so (":port")', () => {
    assert.deepStrictEqual(ok(":7660"), { host: undefined, port: 7660 })
    const bare = refused("7660")
    assert.include(bare, "ambiguous")
    assert.include(bare, '"127.0.0.1:7660"')
    assert.include(bare, '":7660"')
    assert.include(refused(7660), "ambiguous")
  })

  it("explains each mistake", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      ["", "empty"],
      ["   ", "empty"],
      ["127.0.0.1", "port is missing"],
      ["[::1]", "port is missing"],
      ["::1:7660", "brackets"],
      ["fe80::1", "brackets"],
      ["[127.0.0.1]:7660", "not an IPv6 address"],
      ["[::1:7660", "bracketed"],
      ["http://127.0.0.1:7660", "not a URL"],
      ["127.0.0.1:0", "1 to 65535"],
      ["127.0.0.1:65536", "1 to 65535"],
      ["127.0.0.1:99999999", "1 to 65535"],
      ["127.0.0.1:-1", "1 to 65535"],
      ["127.0.0.1:http", "1 to 65535"],
      ["127.0.0.1:", "1 to 65535"],
      ["127.0.0.256:7660", "neither an IPv4 address nor a host name"],
      ["my_host:7660", "neither an IPv4 address nor a host name"],
      ["a b:7660", "neither an IPv4 address nor a host name"],
      [true, "got true"],
      [{}, "got a table"],
      [["127.0.0.1:7660"], "got a list"]
    ]
    for (const [input, expected] of cases) {
      const message = refused(input)
      assert.include(message, expected, JSON.stringify(input))
      assert.include(message, "expected", JSON.stringify(input))
    }
  })

  it("formatListen gives back text that parses to the same setting", () => {
    for (const text of ["off", "127.0.0.1:7660", ":7660", "[::1]:7660", "[::]:80", "localhost:1"]) {
      const setting = ok(text)
      assert.strictEqual(formatListen(setting), text)
      assert.deepStrictEqual(ok(formatListen(setting)), setting)
    }
  })

  it("isLoopback tells this-host-only addresses from reachable ones", () => {
    for (const text of [
      "127.0.0.1:1",
      "127.8.9.10:1",
      "[::1]:1",
      "localhost:1",
      "LOCALHOST:1",
      "[::ffff:127.0.0.1]:1"
    ]) {
      const setting = ok(text)
      assert.isTrue(setting !== "off" && isLoopback(setting), text)
    }
    for (const text of [":1", "0.0.0.0:1", "[::]:1", "192.168.1.2:1", "nas.local:1"]) {
      const setting = ok(text)
      assert.isTrue(setting !== "off" && !isLoopback(setting), text)
    }
  })
})

describe("ListenSettingFromString", () => {
  it.effect("decodes config values and fails with the parser's message", () =>
    Effect.gen(function* () {
      const decode = Schema.decodeUnknownEffect(ListenSettingFromString)
      assert.deepStrictEqual(yield* decode("[::1]:9"), { host: "::1", port: 9 })
      assert.strictEqual(yield* decode("off"), "off")
      const error = yield* Effect.flip(decode("7660"))
      assert.include(error.message, "ambiguous")
      assert.strictEqual(yield* Schema.encodeEffect(ListenSettingFromString)({ host: undefined, port: 7 }), ":7")
    })
  )
})
