/**
 * The releases (the intake), by category: each one's phase, progress and reason; the
 * choice of a selection that waits for one; adding a magnet, a URL or a .torrent/.nzb file;
 * removing one, with or without its files (as the qBittorrent and SABnzbd APIs remove).
 */
import { useState } from "preact/hooks"
import { type IntakeStatus, type IntakeStatusItem, send } from "../api.ts"
import { formatBytes, formatEta, formatRate, formatTime } from "../format.ts"
import { ActionButton, ConfirmButton, Empty, Progress, Section, useActions } from "../ui.tsx"

const PHASES: Readonly<Record<IntakeStatusItem["state"], string>> = {
  queued: "queued in dlsync",
  paused: "paused",
  downloading: "on the service",
  mirroring: "mirroring",
  completed: "complete",
  failed: "failed"
}

export const Releases = (props: { readonly intake: IntakeStatus | null }) => {
  const items = props.intake?.items ?? []
  const byCategory = new Map<string, Array<IntakeStatusItem>>()
  for (const item of items) byCategory.set(item.category, [...(byCategory.get(item.category) ?? []), item])
  return (
    <>
      <Section title="Add a release">
        <AddRelease categories={[...byCategory.keys()].filter((c) => c !== "")} />
      </Section>
      {items.length === 0 && <Empty>No release in the queue.</Empty>}
      {[...byCategory.entries()].map(([category, list]) => (
        <Section
          key={category}
          id={`category-${category || "none"}`}
          title={category === "" ? "No category" : category}
        >
          <ul class="cards">
            {list.map((item) => (
              <Release key={item.id} item={item} />
            ))}
          </ul>
        </Section>
      ))}
    </>
  )
}

const Release = (props: { readonly item: IntakeStatusItem }) => {
  const { item } = props
  const path = `api/releases/${encodeURIComponent(item.id)}`
  return (
    <li class={`card release ${item.state}`} data-release={item.id}>
      <span class="name" title={item.name}>
        {item.name}
      </span>
      <Progress percent={item.percent} label={`${item.name}: ${item.percent}%`} />
      <span class="meta">
        <strong class="phase">{PHASES[item.state]}</strong> · {item.percent}% · {formatBytes(item.size)}
        {item.rate > 0 && ` · ${formatRate(item.rate)} · ETA ${formatEta(item.etaSeconds)}`} · via {item.via}
      </span>
      {item.reason !== null && <span class="reason">{item.reason}</span>}
      {item.selection !== null && <Choice path={path} selection={item.selection} />}
      <span class="row">
        <ConfirmButton
          question={`Remove ${item.name}?`}
          choices={[
            { label: "Remove, keep files", done: `${item.name} removed.`, action: () => send("DELETE", path) },
            {
              label: "Remove with files",
              done: `${item.name} and its files removed.`,
              action: () => send("DELETE", `${path}?files=true`)
            }
          ]}
        >
          Remove…
        </ConfirmButton>
      </span>
    </li>
  )
}

/** The items a selection stage offers; one is chosen. */
const Choice = (props: { readonly path: string; readonly selection: NonNullable<IntakeStatusItem["selection"]> }) => {
  const selectable = props.selection.items.filter((i) => i.selectable)
  return (
    <fieldset class="choice">
      <legend>
        Choose one
        {props.selection.expiresAt !== null && ` before ${formatTime(props.selection.expiresAt)}`}
      </legend>
      {selectable.map((offered) => (
        <ActionButton
          key={offered.itemId}
          done={`Chose ${offered.name}.`}
          action={() => send("POST", `${props.path}/choice`, { itemId: offered.itemId })}
        >
          {offered.name}
          {offered.size !== null && ` (${formatBytes(offered.size)})`}
        </ActionButton>
      ))}
    </fieldset>
  )
}

/** A magnet or URL, or a file; its category. */
const AddRelease = (props: { readonly categories: ReadonlyArray<string> }) => {
  const actions = useActions()
  const [source, setSource] = useState("")
  const [category, setCategory] = useState("")
  const [busy, setBusy] = useState(false)
  return (
    <form
      class="add"
      onSubmit={async (event) => {
        event.preventDefault()
        const form = event.currentTarget
        const file = form.querySelector<HTMLInputElement>("input[type=file]")?.files?.[0]
        let body: FormData | { source: string; category: string }
        if (file !== undefined) {
          body = new FormData()
          body.append("category", category)
          body.append("file", file)
        } else body = { source, category }
        setBusy(true)
        const added = await actions.run("Release added.", () => send("POST", "api/releases", body))
        setBusy(false)
        if (added) {
          setSource("")
          form.reset()
        }
      }}
    >
      <label>
        Magnet link or URL
        <input
          type="text"
          name="source"
          value={source}
          onInput={(event) => setSource(event.currentTarget.value)}
          placeholder="magnet:?xt=… or https://…"
          autoComplete="off"
        />
      </label>
      <label>
        or a .torrent / .nzb file
        <input type="file" name="file" accept=".torrent,.nzb,application/x-bittorrent,application/x-nzb" />
      </label>
      <label>
        Category
        <input
          type="text"
          name="category"
          list="categories"
          value={category}
          onInput={(event) => setCategory(event.currentTarget.value)}
        />
        <datalist id="categories">
          {props.categories.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      </label>
      <button type="submit" class="primary" disabled={busy} aria-busy={busy}>
        Add
      </button>
    </form>
  )
}
