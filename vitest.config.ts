import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

// vitest's default, one worker less than the cores, runs the files one after the other on a
// 2-core machine (this one, CI's, a NAS): 580–630 s against 357–388 s with two.
const cores = availableParallelism()

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    maxWorkers: cores === 1 ? 1 : Math.max(2, cores - 1),
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
