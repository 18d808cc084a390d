/**
 * The clock of the byte path and its connection pool: Node's timers behind one interface,
 * the only place in src/transfer that calls them.
 *
 * Not Effect's Clock: the byte path runs in socket and file callbacks, outside any fiber,
 * and sets a timer per request (its idle watchdog) and moves one per buffer given back (the
 * pool's): through Effect each would be a fiber forked and interrupted on the hot path.
 * The Effect side of the engine (commits, windows, backoff) keeps Effect's Clock.
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
