import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

// vitest's default, one worker less than the cores, runs the files one after the other on a
// 2-core machine (this one, CI's, a NAS): 580–630 s against 357–388 s with two.
const cores = availableParallelism()

/** The files that replace a module (`vi.mock`): they need a module graph of their own. */
const mockingModules = ["test/fs/fsyncDir.test.ts", "test/sync/localOpsNoHardLinks.test.ts"]

export default defineConfig({
  test: {
    maxWorkers: cores === 1 ? 1 : Math.max(2, cores - 1),
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
