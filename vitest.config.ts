import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

// Two workers per core: most of an integration file's time is spent waiting on the processes,
// sockets and disks it drives, and a second file fills that time. On this 2-core machine, quiet
// (the whole suite, wall): 1 worker (vitest's default here) 580–630 s before modules were shared,
// 2 → 281 s, 3 → 247 s, 4 → 231 s. Capped at 8: each worker and what it starts takes memory.
const cores = availableParallelism()
const workers = Math.min(2 * cores, 8)

/** The files that replace a module (`vi.mock`): they need a module graph of their own. */
const mockingModules = ["test/fs/fsyncDir.test.ts", "test/sync/localOpsNoHardLinks.test.ts"]

export default defineConfig({
  test: {
    maxWorkers: workers,
    globalSetup: ["test/support/runTmpdir.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        // A worker keeps its loaded modules from one file to the next: each file would otherwise
        // load Effect and the sources again (the unit files: 405 → 171 CPU s). No test keeps
        // state in a module; each builds its own layers, servers and directories.
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: mockingModules, isolate: false }
      },
      { extends: true, test: { name: "isolated", include: mockingModules, isolate: true } }
    ]
  }
})
