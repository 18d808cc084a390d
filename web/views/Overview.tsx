/**
 * The overview: what needs the owner first (a held deletion, the sign-in, the disk, the rate
 * limit, failures), then who the daemon is signed in as, how it follows the account, the
 * passes, the mirror's size and files by state, and the last hour's transfer rate.
 */
import { useEffect, useLayoutEffect, useState } from "preact/hooks"
import type { RateSample, StatusDocument, TransfersStatus } from "../api.ts"
import { formatBytes, formatCount, formatRate, formatTime, relativeTime } from "../format.ts"
import { Section } from "../ui.tsx"

/** The User Timing mark of the overview's first render with the status document. */
export const RENDERED_MARK = "dlsync-overview-rendered"

export interface Attention {
  readonly text: string
  readonly href: string
  readonly level: "warn" | "error"
}

/** The conditions that need the owner, most urgent first. */
export const attentionOf = (status: StatusDocument, transfers: TransfersStatus | null): ReadonlyArray<Attention> => {
  const list: Array<Attention> = []
  if (status.signIn.state === "login required") {
    list.push({
      level: "error",
      href: "#overview",
      text: `The service refused the sign-in${status.signIn.since === null ? "" : ` since ${formatTime(status.signIn.since)}`}: run \`dlsync login\` on the host.`
    })
  }
  if (status.heldDelete !== null) {
    list.push({
      level: "error",
      href: "#problems",
      text: `A deletion of ${formatCount(status.heldDelete.count)} file(s) is held for your confirmation.`
    })
  }
  const waiting = transfers?.waitingForSpace ?? 0
  if (waiting > 0) {
    list.push({
      level: "error",
      href: "#transfers",
      text: `${formatCount(waiting)} file(s) wait for disk space (${status.disk.freeBytes === null ? "free space unknown" : `${formatBytes(status.disk.freeBytes)} free`}).`
    })
  }
  const limited = transfers?.active.find((t) => t.rateLimitedUntil !== undefined)
  if (limited?.rateLimitedUntil !== undefined) {
    list.push({
      level: "warn",
      href: "#transfers",
      text: `Waiting for the service's rate limit until ${formatTime(limited.rateLimitedUntil)}.`
    })
  }
  if (status.failures.length > 0) {
    list.push({
      level: "warn",
      href: "#problems",
      text: `${formatCount(status.failures.length)} file(s) could not be mirrored.`
    })
  }
  return list
}

export const Overview = (props: {
  readonly status: StatusDocument
  readonly transfers: TransfersStatus | null
  readonly rate: ReadonlyArray<RateSample>
}) => {
  const { status, transfers } = props
  const now = useNow()
  useLayoutEffect(() => {
    // When the overview first showed the mirror (User Timing: bench/webPage.ts, the browser's tools).
    if (performance.getEntriesByName(RENDERED_MARK).length === 0) performance.mark(RENDERED_MARK)
  }, [])
  const attention = attentionOf(status, transfers)
  const nextPoll =
    status.lastPollAt === null ? null : new Date(status.lastPollAt).getTime() + status.pollIntervalSeconds * 1000
  const account = status.daemon?.account
  return (
    <>
      {attention.length > 0 && (
        <ul class="attention" aria-label="Needs you">
          {attention.map((a) => (
            <li key={a.text} class={a.level}>
              <a href={a.href}>{a.text}</a>
            </li>
          ))}
        </ul>
      )}
      <Section title="Mirror">
        <dl class="facts">
          <dt>Signed in as</dt>
          <dd>{account == null ? "not known yet" : `${account.name} (${account.email})`}</dd>
          <dt>Mode</dt>
          <dd>
            {status.mode.name === "changes" ? "change feed" : "listing"} — {status.mode.reason}
          </dd>
          <dt>Last successful pass</dt>
          <dd>
            <time dateTime={status.passes.lastSuccessAt ?? ""}>{relativeTime(status.passes.lastSuccessAt, now)}</time>
          </dd>
          <dt>Next poll</dt>
          <dd>
            {nextPoll === null ? "after the first" : relativeTime(Math.max(nextPoll, now), now)} (every{" "}
            {status.pollIntervalSeconds} s)
          </dd>
          <dt>Mirror size</dt>
          <dd>{formatBytes(status.bytes.mirrored)}</dd>
          <dt>Still to fetch</dt>
          <dd>{formatBytes(status.bytes.pending)}</dd>
          <dt>Free space</dt>
          <dd>{status.disk.freeBytes === null ? "unknown" : formatBytes(status.disk.freeBytes)}</dd>
          <dt>Root</dt>
          <dd class="path">{status.root}</dd>
        </dl>
      </Section>
      <Section title="Files by state">
        <dl class="counts">
          {Object.entries(status.entries).map(([state, count]) => (
            <div key={state}>
              <dt>{state}</dt>
              <dd>{formatCount(count)}</dd>
            </div>
          ))}
          <div>
            <dt>items on the service</dt>
            <dd>{formatCount(status.remote.items)}</dd>
          </div>
        </dl>
      </Section>
      <Section title="Transfer rate, last hour">
        <RateGraph samples={props.rate} now={now} current={transfers?.totals?.bytesPerSecond ?? 0} />
      </Section>
    </>
  )
}

/** The time now, once a second: a clock for "3 min ago", not a poll (nothing is asked of the server). */
const useNow = (): number => {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000)
    return () => window.clearInterval(timer)
  }, [])
  return now
}

const GRAPH_WIDTH = 360
const GRAPH_HEIGHT = 80
const HOUR_MS = 3_600_000

/** The hour's rate as an area over time (SVG: no script, no inline style). */
const RateGraph = (props: {
  readonly samples: ReadonlyArray<RateSample>
  readonly now: number
  readonly current: number
}) => {
  const peak = Math.max(1, ...props.samples.map((s) => s.bytesPerSecond))
  const x = (at: number) => Math.max(0, GRAPH_WIDTH - ((props.now - at) / HOUR_MS) * GRAPH_WIDTH)
  const y = (rate: number) => GRAPH_HEIGHT - (rate / peak) * (GRAPH_HEIGHT - 4)
  const points = props.samples.map((s) => `${x(s.at).toFixed(1)},${y(s.bytesPerSecond).toFixed(1)}`)
  const first = props.samples[0]
  const last = props.samples.at(-1)
  const area =
    first === undefined || last === undefined
      ? ""
      : `M${x(first.at).toFixed(1)},${GRAPH_HEIGHT} L${points.join(" L")} L${x(last.at).toFixed(1)},${GRAPH_HEIGHT} Z`
  return (
    <figure class="graph">
      <svg
        viewBox={`0 0 ${GRAPH_WIDTH} ${GRAPH_HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`Transfer rate over the last hour, peak ${formatRate(peak)}`}
      >
        <path d={area} class="area" />
      </svg>
      <figcaption>
        Now {formatRate(props.current)} · peak {formatRate(props.samples.length === 0 ? 0 : peak)}
      </figcaption>
    </figure>
  )
}
