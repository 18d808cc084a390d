/**
 * The Dockerfile, without a Docker engine: linted by dockerfile-utils (the linter of the
 * VS Code Docker extension), its key properties checked, the build context it copies from
 * allowed by .dockerignore, and its HEALTHCHECK script run against a real HTTP server.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const dockerfile = Fs.readFileSync(Path.join(repo, "Dockerfile"), "utf8")
const linter = Path.join(repo, "node_modules/.bin/dockerfile-utils")
const node = Path.join(repo, "node_modules/.bin/node")

/** Instructions with continuation lines joined and comments dropped. */
const instructions: ReadonlyArray<{ readonly keyword: string; readonly args: string }> = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"))
  .map((line) => {
    const [keyword = "", ...rest] = line.split(/\s+/)
    return { keyword: keyword.toUpperCase(), args: rest.join(" ") }
  })

const Diagnostics = Schema.Array(Schema.Struct({ message: Schema.String, severity: Schema.String }))

const lint = (path: string) => {
  const result = spawnSync(linter, ["lint", "--json", path], { encoding: "utf8" })
  assert.isNull(result.error ?? null, "dockerfile-utils not installed: npm ci")
  return Schema.decodeUnknownSync(Schema.fromJsonString(Diagnostics))(result.stdout || "[]")
}

const portOf = (server: Http.Server): number => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the server is not listening on TCP")
  return address.port
}

const args = (keyword: string) => instructions.filter((i) => i.keyword === keyword).map((i) => i.args)

describe("Dockerfile", () => {
  it("passes dockerfile-utils lint with no diagnostic", () => {
    assert.deepStrictEqual(lint(Path.join(repo, "Dockerfile")), [])
  })

  it("and the linter does report a broken Dockerfile (the check can fail)", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-dockerfile-"))
    const file = Path.join(dir, "Dockerfile")
    Fs.writeFileSync(file, dockerfile.replace("--interval=30s", "--interval=soon").replace("WORKDIR", "WORKDIRR"))
    const messages = lint(file).map((d) => d.message)
    Fs.rmSync(dir, { recursive: true, force: true })
    assert.isTrue(
      messages.some((m) => m.includes("invalid duration")),
      messages.join("\n")
    )
    assert.isTrue(
      messages.some((m) => m.includes("Unknown instruction")),
      messages.join("\n")
    )
  })

  it("pins its base images to exact versions, and runs the Node version the project is developed on", () => {
    const argValues = new Map(args("ARG").map((a) => [a.split("=")[0], a.split("=")[1]]))
    const packageJson = JSON.parse(Fs.readFileSync(Path.join(repo, "package.json"), "utf8"))
    assert.match(argValues.get("NODE_VERSION") ?? "", /^\d+\.\d+\.\d+$/)
    assert.strictEqual(argValues.get("NODE_VERSION"), packageJson.devDependencies.node)
    assert.match(argValues.get("ALPINE_VERSION") ?? "", /^\d+\.\d+$/)
    for (const from of args("FROM")) {
      assert.notMatch(from, /:latest\b|^[a-z]+(\s|$)/, `unpinned base: FROM ${from}`)
      assert.match(from, /^(node:\$\{NODE_VERSION\}-alpine\$\{ALPINE_VERSION\}|alpine:\$\{ALPINE_VERSION\})( AS \w+)?$/)
    }
  })

  it("installs production dependencies only, and the final stage has no npm", () => {
    const runs = args("RUN").join("\n")
    assert.include(runs, "npm ci --omit=dev --ignore-scripts")
    assert.notMatch(runs, /npm (install|i)\b/)
    const stages = dockerfile.split(/^FROM /m)
    const final = stages.at(-1) ?? ""
    assert.match(final, /^alpine:/, "the final stage is plain Alpine: no npm, yarn or corepack")
    assert.include(final, "COPY --from=deps /opt/dlsync/node_modules ./node_modules")
    assert.include(final, "COPY --from=node /usr/local/bin/node /usr/local/bin/node")
  })

  it("runs dlsync under tini through the entrypoint that drops root, with a healthcheck and volumes", () => {
    assert.deepStrictEqual(args("ENTRYPOINT"), ['["/sbin/tini", "--", "/usr/local/bin/dlsync-entrypoint"]'])
    assert.deepStrictEqual(args("CMD"), ['["run"]'])
    assert.deepStrictEqual(args("STOPSIGNAL"), ["SIGTERM"])
    assert.deepStrictEqual(args("VOLUME"), ['["/config", "/data"]'])
    assert.match(args("HEALTHCHECK")[0] ?? "", /CMD \["node", "\/opt\/dlsync\/docker\/healthcheck\.mjs"\]$/)
    // The configuration as the image loads it: test/config/imageEnvironment.test.ts.
    const env = args("ENV").join(" ")
    for (const setting of ["DLSYNC_CONFIG=/config/config.toml", "STATE_DIRECTORY=/config/state"]) {
      assert.include(env, setting)
    }
    // No USER: the entrypoint starts as root only to apply PUID/PGID, then su-exec drops to dlsync.
    assert.deepStrictEqual(args("USER"), [])
    assert.include(Fs.readFileSync(Path.join(repo, "docker/entrypoint.sh"), "utf8"), "exec su-exec dlsync node")
  })

  it("copies only files that exist and that .dockerignore lets into the build context", () => {
    const ignore = Fs.readFileSync(Path.join(repo, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"))
    assert.strictEqual(ignore[0], "**", "everything is excluded unless listed")
    const allowed = ignore.filter((l) => l.startsWith("!")).map((l) => l.slice(1).replace(/\/$/, ""))
    const sources = args("COPY")
      .filter((a) => !a.includes("--from="))
      .flatMap((a) =>
        a
          .replace(/--chmod=\S+\s*/, "")
          .split(/\s+/)
          .slice(0, -1)
      )
    assert.isNotEmpty(sources)
    for (const source of sources) {
      assert.isTrue(Fs.existsSync(Path.join(repo, source)), `${source} does not exist`)
      assert.isTrue(
        allowed.some((a) => source === a || source.startsWith(`${a}/`)),
        `${source} is excluded by .dockerignore`
      )
    }
    assert.isFalse(
      allowed.some((a) => a.includes("node_modules") || a.startsWith("test") || a.startsWith(".")),
      "no node_modules, tests or dotfiles in the context"
    )
  })
})

describe("docker/healthcheck.mjs", () => {
  const check = (env: Readonly<Record<string, string>>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(node, [Path.join(repo, "docker/healthcheck.mjs")], {
        env: { PATH: process.env.PATH ?? "", ...env },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (c: string) => {
        stderr += c
      })
      child.on("exit", (code) => resolve({ code, stderr }))
    })

  const withServer = async (status: number, f: (port: number, paths: Array<string>) => Promise<void>) => {
    const paths: Array<string> = []
    const server = Http.createServer((request, response) => {
      paths.push(request.url ?? "")
      response.writeHead(status).end()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      await f(portOf(server), paths)
    } finally {
      server.close()
    }
  }

  it("exits 0 when /healthz answers 2xx, reaching a wildcard listen address on loopback", async () => {
    await withServer(200, async (port, paths) => {
      assert.strictEqual((await check({ DLSYNC_SERVER_LISTEN: `0.0.0.0:${port}` })).code, 0)
      assert.strictEqual((await check({ DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}` })).code, 0)
      assert.deepStrictEqual(paths, ["/healthz", "/healthz"])
    })
  })

  it("exits 1 on an error status or when nothing listens, saying why", async () => {
    await withServer(503, async (port) => {
      const result = await check({ DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}` })
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "HTTP 503")
    })
    const closed = await new Promise<number>((resolve) => {
      const server = Http.createServer().listen(0, "127.0.0.1", () => {
        const port = portOf(server)
        server.close(() => resolve(port))
      })
    })
    const result = await check({ DLSYNC_SERVER_LISTEN: `127.0.0.1:${closed}` })
    assert.strictEqual(result.code, 1)
    assert.include(result.stderr, `127.0.0.1:${closed}/healthz`)
  })

  it("succeeds without a request when the server is turned off", async () => {
    assert.strictEqual((await check({ DLSYNC_SERVER_LISTEN: "off" })).code, 0)
  })
})
