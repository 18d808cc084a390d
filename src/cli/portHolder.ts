/**
 * Which program listens on a TCP port, when this host lets dlsync see it: the listening
 * socket's inode from /proc/net/tcp and tcp6, then the process whose open files hold that
 * socket (/proc/<pid>/fd). Best effort for a message: anything unreadable (another user's
 * process, systemd's ProtectProc=, no /proc) is "not known", never a failure.
 */
import * as Fs from "node:fs/promises"
import { Effect, Option } from "effect"

export interface PortHolder {
  readonly pid: number
  readonly name: string
}

export const portHolder = (port: number): Effect.Effect<Option.Option<PortHolder>> =>
  Effect.promise(() => findHolder(port).catch(() => undefined)).pipe(Effect.map(Option.fromNullishOr))

/** The words a "port in use" line ends with: who holds it, or how to find out. */
export const portHolderNote = (port: number, holder: Option.Option<PortHolder>): string =>
  Option.match(holder, {
    onSome: ({ pid, name }) => `port ${port} is held by ${name} (pid ${pid})`,
    onNone: () => `\`sudo ss -ltnp 'sport = :${port}'\` names the program holding port ${port}`
  })

// ---------------------------------------------------------------------------------------

/** "0A": TCP_LISTEN in /proc/net/tcp's `st` column. */
const LISTEN = "0A"

const findHolder = async (port: number): Promise<PortHolder | undefined> => {
  const inodes = new Set<string>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await Fs.readFile(table, "utf8").catch(() => "")
    for (const line of text.split("\n").slice(1)) {
      const [, local = "", , state, , , , , , inode] = line.trim().split(/\s+/)
      if (state === LISTEN && Number.parseInt(local.split(":").at(-1) ?? "", 16) === port && inode !== "0") {
        if (inode !== undefined) inodes.add(`socket:[${inode}]`)
      }
    }
  }
  if (inodes.size === 0) return undefined
  const pids = (await Fs.readdir("/proc")).filter((name) => /^\d+$/.test(name))
  for (const pid of pids) {
    const fds = await Fs.readdir(`/proc/${pid}/fd`).catch((): Array<string> => [])
    for (const fd of fds) {
      const target = await Fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")
      if (inodes.has(target)) {
        const name = (await Fs.readFile(`/proc/${pid}/comm`, "utf8").catch(() => "?")).trim()
        return { pid: Number(pid), name }
      }
    }
  }
  return undefined
}
