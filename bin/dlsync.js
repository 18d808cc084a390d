#!/usr/bin/env node
// Launcher: dlsync runs its TypeScript sources directly on Node >= 24 (type stripping),
// so there is no build step. On an older system Node (e.g. 20 on a fresh NAS), it re-runs
// itself on the Node 24 runtime that `npm ci` installed as a devDependency.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const major = Number(process.versions.node.split(".")[0])

if (major >= 24) {
  await import("../src/main.ts")
} else {
  const bundled = fileURLToPath(new URL("../node_modules/node/bin/node", import.meta.url))
  if (!existsSync(bundled)) {
    process.stderr.write(
      `dlsync needs Node.js 24 or newer (this is ${process.version}); run \`npm ci\` to install it locally.\n`
    )
    process.exit(78)
  }
  const child = spawn(bundled, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" })
  const forward = (signal) => child.kill(signal)
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"]
  for (const signal of signals) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const s of signals) process.off(s, forward)
    // Die of the same signal as the child so that supervisors see the truth.
    if (signal) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
}
