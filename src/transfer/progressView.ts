/**
 * The live progress view on a TTY: a block of lines redrawn in place (overall line, then
 * one line per active file with a bar, bytes, rate and ETA), plus the lifecycle events
 * (finished, parked, paused) printed above it as they happen so they stay in the scroll
 * back. `renderProgress` is pure; `ProgressView.run` draws it every `intervalMs` until
 * interrupted, then clears the block.
 */
import { Clock, Effect } from "effect"
import type { ProgressSnapshot, ProgressTrackerShape, TransferEvent } from "./ProgressTracker.ts"
import { formatDone, formatEta, formatRate } from "./progressFormat.ts"

/** The lines of the progress block for a terminal `width` columns wide, at most `maxFiles` files. */
export const renderProgress = (snapshot: ProgressSnapshot, width: number, maxFiles = 8): Array<string> => {
  const o = snapshot.overall
  const lines = [
    clip(
      `Transfers: ${o.active} active, ${o.completed} done${o.parked > 0 ? `, ${o.parked} parked` : ""} · ` +
        `${formatDone(o.done, o.size)} · ${formatRate(o.rate)} · ETA ${formatEta(o.eta)}`,
      width
    )
  ]
  const files = [...snapshot.files].sort((a, b) => b.rate - a.rate)
  for (const f of files.slice(0, maxFiles)) {
    const stats =
      f.rateLimitedUntil === null
        ? ` ${formatDone(f.done, f.size)} ${formatRate(f.rate)} ${formatEta(f.eta)}`
        : ` ${formatDone(f.done, f.size)} rate limit until ${rateLimitedUntilText(f.rateLimitedUntil)}`
    const barWidth = Math.max(0, Math.min(20, width - stats.length - 14))
    const filled = f.size === 0 ? barWidth : Math.round((barWidth * f.done) / f.size)
    const bar = barWidth > 0 ? `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}]` : ""
    const nameWidth = Math.max(8, width - stats.length - bar.length - 3)
    lines.push(clip(`  ${ellipsize(f.name, nameWidth).padEnd(nameWidth)} ${bar}${stats}`, width))
  }
  if (files.length > maxFiles) lines.push(`  … and ${files.length - maxFiles} more`)
  return lines
}

/** One line for a lifecycle event, shared with the log renderer. */
export const describeEvent = (e: TransferEvent): string | undefined => {
  switch (e._tag) {
    case "Started":
      return e.resumedAt > 0 ? `resuming ${e.name} at ${formatDone(e.resumedAt, e.size)}` : `downloading ${e.name}`
    case "Finished":
      return `done ${e.name} (${formatDone(e.size, e.size)}, ${formatRate(e.elapsedMs > 0 ? (e.fetched * 1000) / e.elapsedMs : 0)})`
    case "Parked":
      return `parked ${e.name}: ${e.reason}`
    case "Paused":
      return `paused ${e.name}: ${e.reason}`
    case "Retrying":
      return `retrying ${e.name} in ${(e.delayMs / 1000).toFixed(1)} s (attempt ${e.attempt}): ${e.reason}`
    case "RateLimited":
      return rateLimitedLine(e)
  }
}

/** A file waits for the service's rate limit: until when (UTC, to the second) and for how long. */
export const rateLimitedLine = (e: Extract<TransferEvent, { readonly _tag: "RateLimited" }>): string =>
  `waiting for the service's rate limit: ${e.name} until ${rateLimitedUntilText(e.until)} (${Math.ceil(e.delayMs / 1000)} s)`

/** When a rate-limit wait ends, as UTC time (ISO 8601, rounded up to the second). */
export const rateLimitedUntilText = (until: number): string =>
  `${new Date(Math.ceil(until / 1000) * 1000).toISOString().slice(0, 19)}Z`

export interface ProgressViewOptions {
  readonly write: (text: string) => void
  readonly width: () => number
  readonly intervalMs?: number
}

export const ProgressView = {
  /** Redraws the block until interrupted; events other than Started scroll above it. */
  run: (tracker: ProgressTrackerShape, options: ProgressViewOptions): Effect.Effect<never> =>
    Effect.suspend(() => {
      let drawn = 0
      const clear = () => {
        if (drawn > 0) options.write(`\x1b[${drawn}F\x1b[J`)
        drawn = 0
      }
      const draw = (now: number) => {
        const lines = renderProgress(tracker.snapshot(now), options.width())
        clear()
        options.write(`${lines.join("\n")}\n`)
        drawn = lines.length
      }
      const unsubscribe = tracker.subscribe((e) => {
        const line = e._tag === "Started" ? undefined : describeEvent(e)
        if (line === undefined) return
        clear()
        options.write(`${line}\n`)
      })
      return Effect.forever(
        Clock.currentTimeMillis.pipe(Effect.map(draw), Effect.andThen(Effect.sleep(options.intervalMs ?? 250)))
      ).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            unsubscribe()
            clear()
          })
        )
      )
    })
}

// ---------------------------------------------------------------------------------------

const clip = (line: string, width: number): string => (line.length <= width ? line : `${line.slice(0, width - 1)}…`)

const ellipsize = (name: string, width: number): string =>
  name.length <= width ? name : `…${name.slice(name.length - width + 1)}`
