/**
 * Readiness: whether the daemon can do its job right now, as `/readyz` reports it.
 *
 * The engine feeds three inputs; this service only remembers them and judges:
 * - store: the state database is open (set true after opening, false when closing);
 * - feed: a change-feed poll succeeded within `feedMaxAge` (a failed poll does not count,
 *   so an unreachable service turns the daemon unready once the age runs out);
 * - auth: a credential is available and the service accepted it last time it was asked;
 * - space: no file waits for disk space (transfers.min_free_space).
 *
 * Ready means all four hold. Before the engine reports anything the daemon is unready:
 * readiness is earned, never assumed. Liveness is `/healthz`, not this.
 */
import { Clock, Context, Duration, Effect, Layer, Ref } from "effect"

export interface ReadinessCheck {
  readonly ok: boolean
  /** One human line: why the check passes or fails. */
  readonly detail: string
}

export interface ReadinessReport {
  readonly ready: boolean
  readonly checks: {
    readonly store: ReadinessCheck
    readonly feed: ReadinessCheck
    readonly auth: ReadinessCheck
    readonly space: ReadinessCheck
  }
}

export interface ReadinessShape {
  readonly setStoreOpen: (open: boolean) => Effect.Effect<void>
  /** Records a successful feed poll at the current time. */
  readonly feedPolled: Effect.Effect<void>
  readonly setSignedIn: (signedIn: boolean) => Effect.Effect<void>
  /** How many files wait for disk space now. */
  readonly setWaitingForSpace: (files: number) => Effect.Effect<void>
  readonly report: Effect.Effect<ReadinessReport>
}

export interface ReadinessOptions {
  /** How old the last successful feed poll may be; a few poll intervals is sensible. */
  readonly feedMaxAge: Duration.Input
}

export class Readiness extends Context.Service<Readiness, ReadinessShape>()("dlsync/server/Readiness") {
  static readonly layer = (options: ReadinessOptions): Layer.Layer<Readiness> =>
    Layer.effect(Readiness, makeReadiness(options))
}

export const makeReadiness = Effect.fnUntraced(function* (options: ReadinessOptions) {
  const clock = yield* Clock.Clock
  const maxAgeMs = Duration.toMillis(Duration.fromInputUnsafe(options.feedMaxAge))
  const state = yield* Ref.make<State>({
    storeOpen: false,
    signedIn: false,
    lastPollMs: undefined,
    waitingForSpace: 0
  })

  const report = Effect.gen(function* () {
    const { storeOpen, signedIn, lastPollMs, waitingForSpace } = yield* Ref.get(state)
    const now = clock.currentTimeMillisUnsafe()
    const store: ReadinessCheck = { ok: storeOpen, detail: storeOpen ? "store open" : "store not open" }
    const auth: ReadinessCheck = { ok: signedIn, detail: signedIn ? "signed in" : "not signed in" }
    const feed = feedCheck(lastPollMs, now, maxAgeMs)
    const space: ReadinessCheck =
      waitingForSpace === 0
        ? { ok: true, detail: "no transfer waits for disk space" }
        : {
            ok: false,
            detail: `transfers paused: ${waitingForSpace} file(s) wait for free disk space (transfers.min_free_space)`
          }
    return { ready: store.ok && feed.ok && auth.ok && space.ok, checks: { store, feed, auth, space } }
  })

  return Readiness.of({
    setStoreOpen: (open) => Ref.update(state, (s) => ({ ...s, storeOpen: open })),
    feedPolled: Ref.update(state, (s) => ({ ...s, lastPollMs: clock.currentTimeMillisUnsafe() })),
    setSignedIn: (signedIn) => Ref.update(state, (s) => ({ ...s, signedIn })),
    setWaitingForSpace: (files) => Ref.update(state, (s) => ({ ...s, waitingForSpace: files })),
    report
  })
})

interface State {
  readonly storeOpen: boolean
  readonly signedIn: boolean
  readonly lastPollMs: number | undefined
  readonly waitingForSpace: number
}

const feedCheck = (lastPollMs: number | undefined, now: number, maxAgeMs: number): ReadinessCheck => {
  if (lastPollMs === undefined) return { ok: false, detail: "feed not polled yet" }
  const ageMs = Math.max(0, now - lastPollMs)
  const age = formatAge(ageMs)
  return ageMs <= maxAgeMs
    ? { ok: true, detail: `feed polled ${age} ago` }
    : { ok: false, detail: `feed last polled ${age} ago, more than ${formatAge(maxAgeMs)}` }
}

const formatAge = (ms: number): string =>
  ms < 1000 ? "under 1s" : Duration.format(Duration.seconds(Math.floor(ms / 1000)))
