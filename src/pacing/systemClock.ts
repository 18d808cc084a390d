/**
 * The one adapter to the system's clock where Effect's Clock cannot serve: Node's timers and
 * the wall clock, behind one interface. Everything else reads time through Effect's Clock.
 *
 * Who uses it, and why not Effect's Clock:
 * - the byte path and its connection pool (src/transfer): they run in socket and file
 *   callbacks, outside any fiber, and set a timer per request (the idle watchdog) and move
 *   one per buffer given back (the pool's); through Effect each would be a fiber forked and
 *   interrupted on the hot path;
 * - the API client's wire (api/ApiTransport.ts): its deadline runs inside node:http's
 *   callbacks, which settle the exchange;
 * - the age of a lock file (auth/fileLock.ts): a file's mtime is the filesystem's wall clock,
 *   so its age is measured against the wall clock, never a test's clock.
 */

/** A timer that runs its callback once, unless cancelled; `restart` runs it `ms` from now again. */
export interface Timer {
  readonly cancel: () => void
  readonly restart: () => void
}

export interface Timers {
  /** Calls `onFire` once, `ms` from now. A `background` timer does not keep the process alive. */
  readonly after: (ms: number, onFire: () => void, background?: boolean) => Timer
}

export const nodeTimers: Timers = {
  after: (ms, onFire, background = false) => {
    const t = setTimeout(onFire, ms)
    if (background) t.unref()
    return { cancel: () => clearTimeout(t), restart: () => void t.refresh() }
  }
}

/** Milliseconds since the epoch by the system's wall clock (what file mtimes are in). */
export const wallClockMs = (): number => Date.now()
