/**
 * The web page: starts from the first answer its HTML carries (whether it must sign in, and
 * the status document when it may read: src/web/firstAnswer.ts), so the overview renders
 * with no request of its own; then shows the five views over the live view (live.ts), one at
 * a time by the address's fragment (#overview, #transfers, #releases, #problems, #activity),
 * with Sync now, the links to /metrics and the effective configuration, and one message
 * region for what actions did. Without a first answer it asks `GET /api/session`.
 */
import { render } from "preact"
import { useCallback, useEffect, useLayoutEffect, useState } from "preact/hooks"
import { ApiError, getSession, login, readFirstAnswer, type SessionView, type StatusDocument, send } from "./api.ts"
import { useLive } from "./live.ts"
import { ActionButton, type Actions, ActionsContext } from "./ui.tsx"
import { Activity } from "./views/Activity.tsx"
import { Overview } from "./views/Overview.tsx"
import { Problems, problemCount } from "./views/Problems.tsx"
import { Releases } from "./views/Releases.tsx"
import { Transfers } from "./views/Transfers.tsx"

const VIEWS = {
  overview: "Overview",
  transfers: "Transfers",
  releases: "Releases",
  problems: "Problems",
  activity: "Activity"
} as const

type ViewName = keyof typeof VIEWS

const isView = (name: string): name is ViewName => Object.hasOwn(VIEWS, name)

const viewOfHash = (): ViewName => {
  const name = window.location.hash.replace(/^#/, "")
  return isView(name) ? name : "overview"
}

/** Who reads the page: whether it asks for a password, and whether this visitor may read. */
type Access = Pick<SessionView, "loginRequired" | "signedIn">

const first = readFirstAnswer()

let firstStatus = first?.status ?? null

/** The HTML's status document, for the first dashboard only: one after a later sign-in reads its own. */
const takeFirstStatus = (): StatusDocument | null => {
  const status = firstStatus
  firstStatus = null
  return status
}

const App = () => {
  const [session, setSession] = useState<Access | null>(
    first === undefined ? null : { loginRequired: first.loginRequired, signedIn: first.signedIn }
  )
  const [failure, setFailure] = useState<string | null>(null)
  const ask = useCallback(() => {
    getSession().then(setSession, (cause: unknown) =>
      setFailure(cause instanceof Error ? cause.message : String(cause))
    )
  }, [])
  // Right after the render, not after the next frame (useEffect's wait: up to 100 ms).
  useLayoutEffect(() => {
    if (first === undefined) ask()
  }, [ask])
  if (failure !== null) return <p role="alert">dlsync did not answer: {failure}</p>
  if (session === null) return <p aria-busy="true">Loading…</p>
  if (!session.signedIn) return <Login onSignedIn={setSession} />
  return <Dashboard session={session} onSignedOut={ask} />
}

const Login = (props: { readonly onSignedIn: (view: Access) => void }) => {
  const [password, setPassword] = useState("")
  const [problem, setProblem] = useState<string | null>(null)
  return (
    <main class="login">
      <h1>dlsync</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          try {
            props.onSignedIn(await login(password))
          } catch (cause) {
            setProblem(cause instanceof Error ? cause.message : String(cause))
          }
        }}
      >
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
            required
          />
        </label>
        <button type="submit" class="primary">
          Sign in
        </button>
        {problem !== null && <p role="alert">{problem}</p>}
      </form>
    </main>
  )
}

const Dashboard = (props: { readonly session: Access; readonly onSignedOut: () => void }) => {
  const live = useLive(props.onSignedOut, takeFirstStatus)
  const [view, setView] = useState<ViewName>(viewOfHash)
  const [message, setMessage] = useState<{ readonly text: string; readonly ok: boolean } | null>(null)
  useEffect(() => {
    const follow = () => setView(viewOfHash())
    window.addEventListener("hashchange", follow)
    return () => window.removeEventListener("hashchange", follow)
  }, [])
  const actions: Actions = {
    run: async (done, action) => {
      try {
        await action()
        setMessage({ text: done, ok: true })
        live.refresh()
        return true
      } catch (cause) {
        if (cause instanceof ApiError && cause.status === 401) props.onSignedOut()
        setMessage({ text: cause instanceof Error ? cause.message : String(cause), ok: false })
        return false
      }
    }
  }
  const { status } = live
  const problems = status === null ? 0 : problemCount(status)
  return (
    <ActionsContext.Provider value={actions}>
      <header>
        <h1>dlsync</h1>
        <span class={live.connected ? "live on" : "live"} role="status">
          {live.connected ? "live" : "connecting…"}
        </span>
        <ActionButton kind="primary" done="Sync started." action={() => send("POST", "api/sync")}>
          Sync now
        </ActionButton>
      </header>
      <nav aria-label="Views">
        <ul>
          {Object.entries(VIEWS).map(([name, label]) => (
            <li key={name}>
              <a href={`#${name}`} aria-current={view === name ? "page" : undefined}>
                {label}
                {name === "problems" && problems > 0 && <span class="badge"> {problems}</span>}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <p class={message === null ? "message" : message.ok ? "message ok" : "message error"} aria-live="polite">
        {message?.text ?? ""}
      </p>
      <main id="view" aria-label={VIEWS[view]}>
        {live.error !== null && <p role="alert">The status could not be read: {live.error}</p>}
        {status === null ? (
          <p aria-busy="true">Loading…</p>
        ) : view === "overview" ? (
          <Overview status={status} transfers={live.transfers} rate={live.rate} />
        ) : view === "transfers" ? (
          <Transfers transfers={live.transfers} controls={live.controls} />
        ) : view === "releases" ? (
          <Releases intake={live.intake} />
        ) : view === "problems" ? (
          <Problems status={status} />
        ) : (
          <Activity events={live.events} />
        )}
      </main>
      <footer>
        <a href="metrics">Metrics</a> · <a href="api/config">Effective configuration</a> ·{" "}
        <a href="api/status">Status (JSON)</a>
        {props.session.loginRequired && (
          <>
            {" · "}
            <button
              type="button"
              onClick={() => {
                // Not through the runner: signed out, the page reads nothing more.
                send("POST", "api/logout").then(props.onSignedOut, props.onSignedOut)
              }}
            >
              Sign out
            </button>
          </>
        )}
      </footer>
    </ActionsContext.Provider>
  )
}

const root = document.getElementById("app")
if (root !== null) {
  root.textContent = ""
  render(<App />, root)
}
