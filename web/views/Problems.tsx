/**
 * What the mirror could not do alone: a held mass deletion (its paths and one confirm, the
 * effect of `--allow-big-delete`), failed and parked files (each with a retry), and what it
 * did differently from the service: shortened names, conflict copies, files kept because
 * they were changed here, files deleted here and respected, locked files, filters that
 * select nothing, and the last problems logged.
 */
import { type StatusDocument, send } from "../api.ts"
import { formatCount, formatTime } from "../format.ts"
import { ActionButton, Empty, Section } from "../ui.tsx"

/** The event-log kinds of a conflict copy (your version moved aside) and of a file kept as changed here. */
const CONFLICT_COPY = "conflictcopy"
const KEPT_KINDS = new Set(["skip", "forget"])

/** How many paths a list shows before "and n more". */
const SHOWN = 50

/** How many failed files are shown, each with its retry. */
const SHOWN_FAILURES = 200

export const problemCount = (status: StatusDocument): number =>
  status.failures.length + (status.heldDelete === null ? 0 : 1)

export const Problems = (props: { readonly status: StatusDocument }) => {
  const { status } = props
  const conflicts = status.recentEvents.filter((e) => e.kind === CONFLICT_COPY)
  const kept = status.recentEvents.filter((e) => KEPT_KINDS.has(e.kind) && /changed locally/.test(e.message))
  return (
    <>
      <Section title="Held deletion">
        {status.heldDelete === null ? (
          <Empty>No deletion is held.</Empty>
        ) : (
          <div class="held">
            <p>
              {formatCount(status.heldDelete.count)} mirrored file(s) would be removed (to the trash), held since{" "}
              {formatTime(status.heldDelete.since)}: more than the big-delete limit allows at once. Confirm to let this
              deletion go ahead, as <code>--allow-big-delete</code> does.
            </p>
            <Paths paths={status.heldDelete.paths} total={status.heldDelete.count} />
            <ActionButton
              kind="danger"
              done="Confirmed: the deletion goes ahead at the next pass."
              action={() => {
                const held = status.heldDelete
                return held === null
                  ? Promise.resolve()
                  : send("POST", "api/deletions/confirm", { count: held.count, since: held.since })
              }}
            >
              Confirm deletion of {formatCount(status.heldDelete.count)} file(s)
            </ActionButton>
          </div>
        )}
      </Section>
      <Section title="Failed and parked files">
        {status.failures.length === 0 ? (
          <Empty>Every file in scope is mirrored or on its way.</Empty>
        ) : (
          <ul class="cards">
            {status.failures.slice(0, SHOWN_FAILURES).map((f) => (
              <li key={f.path} class="card failure">
                <span class="name" title={f.path}>
                  {f.path}
                </span>
                <span class="reason">
                  {f.reason}
                  {f.attempts > 0 && ` (${f.attempts} attempt${f.attempts === 1 ? "" : "s"})`}
                </span>
                {f.remoteId !== null && (
                  <ActionButton
                    label={`Retry ${f.path}`}
                    done={`Retrying ${f.path}.`}
                    action={() => send("POST", `api/files/${encodeURIComponent(f.remoteId ?? "")}/retry`)}
                  >
                    Retry
                  </ActionButton>
                )}
              </li>
            ))}
            {status.failures.length > SHOWN_FAILURES && (
              <li class="note">
                and {formatCount(status.failures.length - SHOWN_FAILURES)} more (`dlsync status --json` lists them all)
              </li>
            )}
          </ul>
        )}
      </Section>
      <Listed
        title="Shortened names"
        note="Their remote names are too long for this file system: the mirror holds them under a shorter name."
        items={status.shortened.map((s) => `${s.path} (on the service: ${s.name})`)}
      />
      <Listed
        title="Conflict copies"
        note="Changed here while the service had a new version: your version was moved aside."
        items={conflicts.map((e) => (e.path === null ? e.message : `${e.path}: ${e.message}`))}
      />
      <Listed
        title="Kept because you changed them"
        note="Files changed here that the mirror leaves as they are."
        items={kept.map((e) => (e.path === null ? e.message : `${e.path}: ${e.message}`))}
      />
      <Listed
        title="Deleted here"
        note="Files you deleted from the mirror; they stay deleted (mirror.on_local_delete)."
        items={status.locallyDeleted}
      />
      <Listed title="Locked on the service" items={status.locked} />
      <Listed title="Filters that select nothing" items={status.filterWarnings} />
      <Listed
        title="Recent problems"
        items={status.recentProblems.map(
          (p) => `${formatTime(p.at)} ${p.message.startsWith(`${p.kind}:`) ? p.message : `${p.kind}: ${p.message}`}`
        )}
      />
    </>
  )
}

const Paths = (props: { readonly paths: ReadonlyArray<string>; readonly total: number }) => (
  <>
    <ul class="paths">
      {props.paths.slice(0, SHOWN).map((p) => (
        <li key={p}>{p}</li>
      ))}
    </ul>
    {props.total > Math.min(SHOWN, props.paths.length) && (
      <p class="note">and {formatCount(props.total - Math.min(SHOWN, props.paths.length))} more</p>
    )}
  </>
)

/** A list shown only when it holds something. */
const Listed = (props: { readonly title: string; readonly note?: string; readonly items: ReadonlyArray<string> }) =>
  props.items.length === 0 ? null : (
    <Section title={props.title}>
      {props.note !== undefined && <p class="note">{props.note}</p>}
      <Paths paths={props.items} total={props.items.length} />
    </Section>
  )
