/**
 * The transfers, as the daemon publishes them (pushed by the event stream about once a
 * second while any file transfers), with pause and resume of all, and a bandwidth limit now
 * (until restart or until a time).
 */
import { useState } from "preact/hooks"
import { type ControlState, send, type TransfersStatus } from "../api.ts"
import { formatBytes, formatCount, formatEta, formatRate, formatTime } from "../format.ts"
import { ActionButton, Empty, Progress, Section } from "../ui.tsx"

const MIB = 1024 * 1024

export const Transfers = (props: {
  readonly transfers: TransfersStatus | null
  readonly controls: ControlState | null
}) => {
  const { transfers, controls } = props
  const totals = transfers?.totals ?? null
  return (
    <>
      <Section title="Controls">
        <div class="row">
          {controls?.transfersPaused === true ? (
            <ActionButton kind="primary" done="Transfers resumed." action={() => send("POST", "api/transfers/resume")}>
              Resume all
            </ActionButton>
          ) : (
            <ActionButton done="Transfers paused." action={() => send("POST", "api/transfers/pause")}>
              Pause all
            </ActionButton>
          )}
          <span class="note" role="status">
            {controls === null ? "" : controls.transfersPaused ? "Paused" : "Running"}
          </span>
        </div>
        {controls !== null && <Bandwidth controls={controls} />}
      </Section>
      <Section title="Now">
        {totals === null ? (
          <Empty>
            Nothing is transferring.
            {(transfers?.waitingForSpace ?? 0) > 0 && ` ${transfers?.waitingForSpace} file(s) wait for disk space.`}
          </Empty>
        ) : (
          <p class="totals">
            {formatCount(totals.active)} active · {formatBytes(totals.bytes)} of {formatBytes(totals.size)} (
            {totals.percent}%) · {formatRate(totals.bytesPerSecond)} · {formatEta(totals.etaSeconds)} left ·{" "}
            {formatCount(totals.completed)} done, {formatCount(totals.parked)} parked since start
          </p>
        )}
        {transfers !== null && transfers.active.length > 0 && (
          <ul class="cards" aria-label="Active transfers">
            {transfers.active.map((t) => (
              <li key={t.fileId} class="card transfer">
                <span class="name" title={t.path}>
                  {t.path}
                </span>
                <Progress percent={t.percent} label={`${t.path}: ${t.percent}%`} />
                <span class="meta">
                  {formatBytes(t.bytes)} / {formatBytes(t.size)} · {formatRate(t.bytesPerSecond)} · ETA{" "}
                  {formatEta(t.etaSeconds)} · {t.connections} conn.
                  {t.attempts > 0 && ` · attempt ${t.attempts + 1}`}
                  {t.rateLimitedUntil !== undefined && ` · rate limit until ${formatTime(t.rateLimitedUntil)}`}
                </span>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  )
}

/** A bandwidth limit now: MiB/s (0: none), until restart or a time; or back to the configured one. */
const Bandwidth = (props: { readonly controls: ControlState }) => {
  const { bandwidth } = props.controls
  const [mib, setMib] = useState("")
  const [until, setUntil] = useState("")
  const describe = (bytes: number) => (bytes === 0 ? "none" : formatRate(bytes))
  return (
    <form
      class="bandwidth"
      onSubmit={(event) => {
        event.preventDefault()
      }}
    >
      <p>
        Limit in force: <strong>{describe(bandwidth.limit)}</strong> (configured: {describe(bandwidth.configured)})
        {bandwidth.setNow !== null &&
          `, set here ${bandwidth.setNow.until === null ? "until restart" : `until ${formatTime(bandwidth.setNow.until)}`}`}
      </p>
      <div class="row">
        <label>
          MiB/s (0: none)
          <input
            type="number"
            min="0"
            step="0.1"
            inputMode="decimal"
            value={mib}
            onInput={(event) => setMib(event.currentTarget.value)}
            required
          />
        </label>
        <label>
          Until (empty: restart)
          <input type="datetime-local" value={until} onInput={(event) => setUntil(event.currentTarget.value)} />
        </label>
      </div>
      <div class="row">
        <ActionButton
          kind="primary"
          done="Bandwidth limit set."
          disabled={mib.trim() === "" || !(Number(mib) >= 0)}
          action={() =>
            send("POST", "api/bandwidth", {
              bytesPerSecond: Math.round(Number(mib) * MIB),
              until: until === "" ? null : new Date(until).toISOString()
            })
          }
        >
          Set limit
        </ActionButton>
        {bandwidth.setNow !== null && (
          <ActionButton
            done="Back to the configured limit."
            action={() => send("POST", "api/bandwidth", { bytesPerSecond: null })}
          >
            Back to configured
          </ActionButton>
        )}
      </div>
    </form>
  )
}
