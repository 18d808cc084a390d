/**
 * The page's shared pieces: the action runner every button uses (one message at a time in a
 * live region, the document read again after), a button that is busy while its action
 * runs, a progress bar, and a two-step confirmation for what cannot be undone.
 */
import { type ComponentChildren, createContext } from "preact"
import { useContext, useState } from "preact/hooks"

export interface Actions {
  /** Runs `action`; says `done` (or the server's reason) in the message region; true when it worked. */
  readonly run: (done: string, action: () => Promise<unknown>) => Promise<boolean>
}

export const ActionsContext = createContext<Actions>({ run: async () => false })

export const useActions = (): Actions => useContext(ActionsContext)

/** A button whose action runs through the page's runner, disabled while it runs. */
export const ActionButton = (props: {
  readonly done: string
  readonly action: () => Promise<unknown>
  readonly children: ComponentChildren
  readonly kind?: "primary" | "danger"
  readonly disabled?: boolean
  readonly label?: string
}) => {
  const actions = useActions()
  const [busy, setBusy] = useState(false)
  return (
    <button
      type="button"
      class={props.kind ?? ""}
      disabled={busy || props.disabled === true}
      aria-busy={busy}
      aria-label={props.label}
      onClick={async () => {
        setBusy(true)
        try {
          await actions.run(props.done, props.action)
        } finally {
          setBusy(false)
        }
      }}
    >
      {props.children}
    </button>
  )
}

/** An action to confirm first: the button opens its confirmation, which says what happens. */
export const ConfirmButton = (props: {
  readonly children: ComponentChildren
  readonly question: string
  readonly choices: ReadonlyArray<{
    readonly label: string
    readonly done: string
    readonly action: () => Promise<unknown>
  }>
}) => {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button type="button" onClick={() => setAsking(true)} aria-expanded={false}>
        {props.children}
      </button>
    )
  }
  return (
    <fieldset class="confirm">
      <legend>{props.question}</legend>
      {props.choices.map((choice) => (
        <ActionButton key={choice.label} kind="danger" done={choice.done} action={choice.action}>
          {choice.label}
        </ActionButton>
      ))}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  )
}

/** A progress bar with its figure for screen readers and eyes alike. */
export const Progress = (props: { readonly percent: number; readonly label: string }) => (
  <progress max={100} value={props.percent} aria-label={props.label}>
    {props.percent}%
  </progress>
)

/** A section of a view with its heading. */
export const Section = (props: {
  readonly title: string
  readonly children: ComponentChildren
  readonly id?: string
}) => (
  <section aria-labelledby={`${props.id ?? slug(props.title)}-title`}>
    <h2 id={`${props.id ?? slug(props.title)}-title`}>{props.title}</h2>
    {props.children}
  </section>
)

const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, "-")

/** Nothing to show: one quiet line. */
export const Empty = (props: { readonly children: ComponentChildren }) => <p class="empty">{props.children}</p>
