import { assert, describe, it } from "@effect/vitest"
import { allowedHosts, isAllowedHost } from "../../src/server/HostCheck.ts"

describe("isAllowedHost", () => {
  it("answers the listen host name, loopback names and IP literals; refuses other names and no Host", () => {
    const allowed = allowedHosts({ host: "nas.local", port: 7660 }, [" Media.Example ", "[fd00::5]:7660"])
    for (const host of [
      "nas.local:7660",
      "NAS.local",
      "media.example",
      "localhost",
      "a.localhost:1",
      "10.0.0.1:7660"
    ]) {
      assert.isTrue(isAllowedHost(host, allowed), host)
    }
    for (const host of ["[::1]:7660", "::1", "[fd00::5]"]) assert.isTrue(isAllowedHost(host, allowed), host)
    for (const host of [undefined, "", ":7660", "evil.example", "localhost.evil.example", "nas.local.evil:7660"]) {
      assert.isFalse(isAllowedHost(host, allowed), String(host))
    }
  })

  it("with every interface (no listen host) only loopback names, IPs and configured names pass", () => {
    const allowed = allowedHosts({ host: undefined, port: 7660 }, [])
    assert.isTrue(isAllowedHost("127.0.0.1:7660", allowed))
    assert.isFalse(isAllowedHost("nas.local:7660", allowed))
  })
})
