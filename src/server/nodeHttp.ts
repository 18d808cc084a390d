/**
 * node:http, taken as a CommonJS module. Imported as an ES module (`import … from
 * "node:http"`), Node evaluates every export for the module's namespace, its lazy WebSocket,
 * CloseEvent and MessageEvent included, which load Node's own copy of undici: ≈ 2.5 MB of
 * an idle daemon's RSS (bench/memory.ts) for classes dlsync never uses. Type-only imports of
 * node:http cost nothing; test/cli/build.test.ts checks that the daemon has none other.
 */
export const NodeHttp = process.getBuiltinModule("node:http")
