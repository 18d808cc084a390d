/**
 * What the mirror did, newest first, as the event stream tells it (its last events on
 * connecting, then each as it happens): files landed, failed or removed, releases complete
 * or failed, passes; filtered by kind and by text.
 */
import { useState } from "preact/hooks"
import type { PageEvent } from "../api.ts"
import { formatBytes, formatTime } from "../format.ts"
import { Empty } from "../ui.tsx"

type Group = "all" | "landed" | "failed" | "removed" | "releases" | "passes"

const GROUPS: Readonly<Record<Group, string>> = {
  all: "Everything",
  landed: "Landed",
  failed: "Failed",
  removed: "Deleted or moved",
  releases: "Releases",
  passes: "Passes"
}

const groupOf = (event: PageEvent): Group => {
  switch (event._tag) {
    case "file_complete":
    case "download_complete":
      return "landed"
    case "file_failed":
      return "failed"
    case "local_removed":
    case "local_moved":
    case "deletion_held":
      return "removed"
    case "release_complete":
    case "release_failed":
      return "releases"
    case "pass_complete":
      return "passes"
  }
}

const text = (value: unknown): string => (typeof value === "string" ? value : "")
const count = (value: unknown): number => (typeof value === "number" ? value : 0)

/** One line saying what happened. */
export const describeEvent = (e: PageEvent): string => {
  switch (e._tag) {
    case "file_complete":
      return `Landed ${text(e.path)} (${formatBytes(count(e.size))})`
    case "file_failed":
      return `Failed ${text(e.path)}: ${text(e.reason)}`
    case "local_moved":
      return `Moved ${text(e.from)} → ${text(e.to)}`
    case "local_removed":
      return `${e.how === "trash" ? "Moved to the trash" : "Deleted"}: ${text(e.path)}`
    case "deletion_held":
      return `Held a deletion of ${count(e.count)} file(s): ${text(e.reason)}`
    case "pass_complete":
      return `Pass complete: ${count(e.changedCount)} change(s), ${count(e.downloaded)} downloaded, ${count(e.failed)} failed`
    case "download_complete":
      return `Download complete: ${count(e.pathsCount)} file(s)`
    case "release_complete":
      return `Release complete: ${text(e.name)} (${count(e.files)} file(s), ${formatBytes(count(e.size))})`
    case "release_failed":
      return `Release failed: ${text(e.name)}: ${text(e.reason)}`
  }
}

export const Activity = (props: { readonly events: ReadonlyArray<PageEvent> }) => {
  const [group, setGroup] = useState<Group>("all")
  const [filter, setFilter] = useState("")
  const needle = filter.trim().toLowerCase()
  const shown = props.events
    .filter((e) => group === "all" || groupOf(e) === group)
    .map((e) => ({ event: e, line: describeEvent(e) }))
    .filter((e) => needle === "" || e.line.toLowerCase().includes(needle))
    .reverse()
  return (
    <section aria-labelledby="activity-title">
      <h2 id="activity-title">Activity</h2>
      <div class="row filters">
        <label>
          Show
          <select value={group} onChange={(event) => setGroup(groupOfName(event.currentTarget.value))}>
            {Object.entries(GROUPS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Containing
          <input type="search" value={filter} onInput={(event) => setFilter(event.currentTarget.value)} />
        </label>
      </div>
      {shown.length === 0 ? (
        <Empty>Nothing yet{group === "all" && needle === "" ? " since the daemon started" : " matches"}.</Empty>
      ) : (
        <ol class="events">
          {shown.map(({ event, line }, i) => (
            <li key={`${event.at}-${i}`} class={groupOf(event)}>
              <time dateTime={event.at}>{formatTime(event.at)}</time> <span>{line}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}

const isGroup = (name: string): name is Group => Object.hasOwn(GROUPS, name)

const groupOfName = (name: string): Group => (isGroup(name) ? name : "all")
