/**
 * node:http as a CommonJS module, for every server dlsync runs. Imported as an ES module,
 * Node evaluates every export, its lazy WebSocket, CloseEvent and MessageEvent included,
 * which load Node's own copy of undici (≈ 14 MB of an idle daemon's RSS, for classes
 * dlsync never uses). test/cli/build.test.ts holds the daemon's code to it.
 */
export const Http = process.getBuiltinModule("node:http")
