/** Spawning real child processes (Node 24, type stripping) and reading their line output. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"

/** Node 24 from node_modules (the system node may be older). */
export const NODE = Path.resolve("node_modules/.bin/node")

/** Node's compile cache makes the second and later child start faster. */
const COMPILE_CACHE = Path.join(Os.tmpdir(), "dlsync-test-compile-cache")

export interface Child {
  readonly process: ChildProcessWithoutNullStreams
  /** Resolves when a stdout line satisfies `predicate` (lines already seen count). */
  waitForLine(predicate: (line: string) => boolean): Promise<string>
  /** Resolves with the exit code (null when killed by a signal) once the child has exited. */
  readonly exited: Promise<number | null>
  readonly lines: ReadonlyArray<string>
  readonly stderr: () => string
}

/** Starts `node <script> ...args`; the child is SIGKILLed with the scope if still running. */
export const spawnChild = (script: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync((): Child => {
      const proc = spawn(NODE, [script, ...args], {
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE }
      })
      const lines: Array<string> = []
      const waiters: Array<{ predicate: (line: string) => boolean; resolve: (line: string) => void }> = []
      let buffer = ""
      let errors = ""
      proc.stdout.setEncoding("utf8")
      proc.stdout.on("data", (chunk: string) => {
        buffer += chunk
        for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
          const line = buffer.slice(0, i)
          buffer = buffer.slice(i + 1)
          lines.push(line)
          for (const w of [...waiters]) {
            if (w.predicate(line)) {
              waiters.splice(waiters.indexOf(w), 1)
              w.resolve(line)
            }
          }
        }
      })
      proc.stderr.setEncoding("utf8")
      proc.stderr.on("data", (chunk: string) => {
        errors += chunk
      })
      const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)))
      return {
        process: proc,
        lines,
        stderr: () => errors,
        exited,
        waitForLine: (predicate) => {
          const seen = lines.find(predicate)
          if (seen !== undefined) return Promise.resolve(seen)
          return Promise.race([
            new Promise<string>((resolve) => waiters.push({ predicate, resolve })),
            exited.then((code) => {
              throw new Error(`child exited (${code}) before the line; stderr:\n${errors}`)
            })
          ])
        }
      }
    }),
    (child) =>
      Effect.promise(async () => {
        if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL")
        await child.exited
      })
  )
