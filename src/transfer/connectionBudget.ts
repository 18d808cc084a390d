/**
 * The connection budget: at most `transfers.max_connections` requests in flight to one CDN
 * host, over every file under way. A segment worker holds one permit for as long as it
 * runs (its requests and the kept-alive socket between them), so the connections a host
 * sees from dlsync never exceed the budget, whatever the files' adaptive counts ask for.
 *
 * The first worker of a file waits for its permit (every file makes progress eventually);
 * the others are opened only with a permit free at that moment, so a file never queues
 * behind its own extra connections.
 */
import { Effect, Semaphore } from "effect"

export class ConnectionBudget {
  readonly max: number
  private readonly hosts = new Map<string, { readonly permits: Semaphore.Semaphore; held: number }>()

  constructor(max: number) {
    this.max = Math.max(1, max)
  }

  /** Permits to `host` free now. */
  free(host: string): number {
    return this.max - (this.hosts.get(host)?.held ?? 0)
  }

  /** Runs `work` holding one permit to `host`, waiting for one. */
  withConnection<A, E, R>(host: string, work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    const h = this.host(host)
    return h.permits.withPermit(Effect.suspend(() => this.counted(h, work)))
  }

  /**
   * An effect that runs `work` holding one permit to `host` if one is free now; `undefined`
   * when none is. The permit counts from the moment the effect starts: an effect that never
   * runs (its fiber interrupted before it began) holds nothing. Several tries in a row see
   * what the earlier ones took only if each is started before the next is asked for
   * (segmentWorkers forks them with startImmediately).
   */
  tryConnection<A, E, R>(host: string, work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> | undefined {
    const h = this.host(host)
    if (this.max - h.held <= 0) return undefined
    return Effect.suspend(() => this.counted(h, h.permits.withPermit(work)))
  }

  private host(host: string): { readonly permits: Semaphore.Semaphore; held: number } {
    let h = this.hosts.get(host)
    if (h === undefined) {
      h = { permits: Semaphore.makeUnsafe(this.max), held: 0 }
      this.hosts.set(host, h)
    }
    return h
  }

  /** Counts a permit as held from now until `work` ends. */
  private counted<A, E, R>(h: { held: number }, work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    h.held++
    return work.pipe(Effect.ensuring(Effect.sync(() => void h.held--)))
  }
}
