/**
 * A real qBittorrent (Debian's qbittorrent-nox) for the conformance suite: headless on
 * 127.0.0.1 at a free port, with a profile of its own in a temporary folder whose config
 * sets the Web UI user and password (PBKDF2, as qBittorrent stores it) before it starts.
 * It talks to no one: DHT, PeX, LSD, UPnP/NAT-PMP and the peer-country lookup are off and
 * libtorrent is bound to the loopback interface; torrents are only ever added stopped.
 */
import { execFileSync, spawn } from "node:child_process"
import { pbkdf2Sync, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"

export const NOX = "qbittorrent-nox"
export const NOX_USER = "admin"
export const NOX_PASSWORD = "conformance-password"

/** The installed qbittorrent-nox's version ("v4.5.2"), or undefined when it is not installed. */
export const noxVersion = (): string | undefined => {
  try {
    return execFileSync(NOX, ["--version"], { encoding: "utf8", timeout: 20_000 }).trim().split(/\s+/).at(-1)
  } catch {
    return undefined
  }
}

/** A running qbittorrent-nox for the test's scope; its origin, e.g. "http://127.0.0.1:41234". */
export const startNox = Effect.gen(function* () {
  const profile = yield* Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-nox-"))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
  const port = yield* Effect.promise(freePort)
  const configDir = Path.join(profile, "qBittorrent", "config")
  Fs.mkdirSync(configDir, { recursive: true })
  Fs.writeFileSync(Path.join(configDir, "qBittorrent.conf"), config(profile, port))
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(NOX, [`--profile=${profile}`, `--webui-port=${port}`], { stdio: ["ignore", "ignore", "pipe"] })
    ),
    (process) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            if (process.exitCode !== null || process.signalCode !== null) return resolve()
            process.once("exit", () => resolve())
            process.kill("SIGKILL")
          })
      )
  )
  const origin = `http://127.0.0.1:${port}`
  yield* Effect.promise(() => answering(origin, child))
  return origin
})

// ---------------------------------------------------------------------------------------

/** qBittorrent.conf: the legal notice accepted, every outside contact off, the Web UI's user set. */
const config = (profile: string, port: number): string => {
  const salt = randomBytes(16)
  const key = pbkdf2Sync(NOX_PASSWORD, salt, 100_000, 64, "sha512")
  return [
    "[LegalNotice]",
    "Accepted=true",
    "",
    "[BitTorrent]",
    "Session\\DHTEnabled=false",
    "Session\\LSDEnabled=false",
    "Session\\PeXEnabled=false",
    "Session\\Interface=lo",
    "Session\\InterfaceName=lo",
    "Session\\InterfaceAddress=127.0.0.1",
    "Session\\Port=0",
    `Session\\DefaultSavePath=${Path.join(profile, "downloads")}`,
    "",
    "[Network]",
    "PortForwardingEnabled=false",
    "",
    "[Preferences]",
    "Connection\\ResolvePeerCountries=false",
    "Connection\\UPnP=false",
    "General\\Locale=en",
    "WebUI\\Address=127.0.0.1",
    `WebUI\\Port=${port}`,
    `WebUI\\Username=${NOX_USER}`,
    `WebUI\\Password_PBKDF2="@ByteArray(${salt.toString("base64")}:${key.toString("base64")})"`,
    ""
  ].join("\n")
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Resolves once the Web UI answers (403 before sign-in), rejects if the process ends first. */
const answering = (origin: string, child: ReturnType<typeof spawn>) =>
  new Promise<void>((resolve, reject) => {
    let stderr = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = () => reject(new Error(`${NOX} exited before answering: ${stderr.slice(-500)}`))
    child.once("exit", exited)
    const attempt = () => {
      fetch(`${origin}/api/v2/app/webapiVersion`).then(
        () => {
          child.off("exit", exited)
          resolve()
        },
        // Not listening yet: ask again once this attempt's connection was refused.
        () => setImmediate(attempt)
      )
    }
    attempt()
  })
