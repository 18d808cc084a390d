/**
 * What the page knows, kept current without polling: the status document (the one the page
 * came with, else `GET /api/status`), then read again only when the event stream
 * (`GET /api/events`) says the mirror changed; between two reads, the stream's sections (transfers, releases, controls) are
 * newer than the document's and shown instead. Each section has the document's shape, so a
 * view reads `view.transfers` the same whichever came last.
 */
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks"
import {
  ApiError,
  type ControlState,
  getStatus,
  type IntakeStatus,
  type PageEvent,
  type RateSample,
  type StatusDocument,
  type TransfersStatus
} from "./api.ts"

/** Events the page keeps for the activity view (the server sends its last 100 on connecting). */
const KEPT_EVENTS = 300

/** Rate samples kept: the server's hour (360 × 10 s). */
const KEPT_SAMPLES = 360

/** Bursts of mirror events (a pass landing many files) become one read of the document. */
const REFRESH_AFTER_MS = 300

export interface LiveView {
  readonly status: StatusDocument | null
  readonly transfers: TransfersStatus | null
  readonly intake: IntakeStatus | null
  readonly controls: ControlState | null
  /** Mirror events, newest last. */
  readonly events: ReadonlyArray<PageEvent>
  readonly rate: ReadonlyArray<RateSample>
  /** Whether the event stream is open. */
  readonly connected: boolean
  /** Why the document could not be read, if it could not. */
  readonly error: string | null
  /** Reads the document again now (after an action). */
  readonly refresh: () => void
}

interface Pushed {
  readonly transfers: TransfersStatus | null
  readonly intake: IntakeStatus | null
  readonly controls: ControlState | null
}

const NOTHING_PUSHED: Pushed = { transfers: null, intake: null, controls: null }

/** Parses a message's JSON; the server writes one line of it per message. */
const parse = <A>(event: Event): A | undefined => {
  if (!(event instanceof MessageEvent) || typeof event.data !== "string") return undefined
  // The server's own types (EventStream.ts): one build serves both.
  return JSON.parse(event.data) as A
}

/**
 * The live view, from the document `first` gives (null: read it now); `onSignedOut` when the
 * stream or the document says the session ended.
 */
export const useLive = (onSignedOut: () => void, first: () => StatusDocument | null): LiveView => {
  const [status, setStatus] = useState<StatusDocument | null>(first)
  // Whether the first render had a document: taken on the first render only.
  const hadFirst = useRef(status !== null)
  const [pushed, setPushed] = useState<Pushed>(NOTHING_PUSHED)
  const [events, setEvents] = useState<ReadonlyArray<PageEvent>>([])
  const [rate, setRate] = useState<ReadonlyArray<RateSample>>([])
  const [connected, setConnected] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const reading = useRef<{ inFlight: boolean; again: boolean; timer: number | undefined }>({
    inFlight: false,
    again: false,
    timer: undefined
  })

  const refresh = useMemo(() => {
    const read = async (): Promise<void> => {
      const state = reading.current
      if (state.inFlight) {
        state.again = true
        return
      }
      state.inFlight = true
      try {
        const document = await getStatus()
        setStatus(document)
        // The document is now the newest word on every section.
        setPushed(NOTHING_PUSHED)
        setError(null)
      } catch (cause) {
        if (cause instanceof ApiError && cause.status === 401) onSignedOut()
        else setError(cause instanceof Error ? cause.message : String(cause))
      } finally {
        state.inFlight = false
        if (state.again) {
          state.again = false
          void read()
        }
      }
    }
    return read
  }, [onSignedOut])

  // Right after the first render, not after the next frame (useEffect's wait: up to 100 ms).
  useLayoutEffect(() => {
    if (!hadFirst.current) void refresh()
    const soon = () => {
      const state = reading.current
      if (state.timer !== undefined) return
      state.timer = window.setTimeout(() => {
        state.timer = undefined
        void refresh()
      }, REFRESH_AFTER_MS)
    }
    let opened = 0
    /** The stream with its listeners; one at a time. */
    const open = (): EventSource => {
      const stream = new EventSource("api/events")
      stream.addEventListener("open", () => setConnected(true))
      stream.addEventListener("error", () => {
        setConnected(false)
        // A closed stream is not retried by the browser: the session ended or the daemon refused it.
        if (stream.readyState === EventSource.CLOSED) void refresh()
      })
      stream.addEventListener("history", (event) => {
        const past = parse<{ samples: ReadonlyArray<RateSample>; events: ReadonlyArray<PageEvent> }>(event)
        if (past === undefined) return
        setRate(past.samples.slice(-KEPT_SAMPLES))
        setEvents(past.events.slice(-KEPT_EVENTS))
        // Reconnected after a gap (not the first stream: the document was just read): what changed meanwhile.
        if (opened++ > 0) soon()
      })
      stream.addEventListener("transfers", (event) => {
        const transfers = parse<TransfersStatus>(event)
        if (transfers === undefined) return
        setPushed((p) => {
          // The last transfer ended: files landed, the document's counts changed.
          if (transfers.active.length === 0 && (p.transfers?.active.length ?? 0) > 0) soon()
          return { ...p, transfers }
        })
      })
      stream.addEventListener("intake", (event) => {
        const intake = parse<IntakeStatus>(event)
        if (intake !== undefined) setPushed((p) => ({ ...p, intake }))
      })
      stream.addEventListener("controls", (event) => {
        const controls = parse<ControlState>(event)
        if (controls !== undefined) setPushed((p) => ({ ...p, controls }))
      })
      stream.addEventListener("rate", (event) => {
        const sample = parse<RateSample>(event)
        if (sample !== undefined) setRate((r) => [...r.slice(-(KEPT_SAMPLES - 1)), sample])
      })
      stream.addEventListener("mirror", (event) => {
        const mirrorEvent = parse<PageEvent>(event)
        if (mirrorEvent === undefined) return
        setEvents((e) => [...e.slice(-(KEPT_EVENTS - 1)), mirrorEvent])
        soon()
      })
      return stream
    }
    // A hidden tab holds no stream: a browser opens about six connections to one server
    // (HTTP/1.1), and streams of tabs in the background would leave none for the next tab.
    let stream: EventSource | undefined = document.hidden ? undefined : open()
    const follow = () => {
      if (document.hidden) {
        stream?.close()
        stream = undefined
        setConnected(false)
      } else stream ??= open()
    }
    document.addEventListener("visibilitychange", follow)
    return () => {
      document.removeEventListener("visibilitychange", follow)
      stream?.close()
      window.clearTimeout(reading.current.timer)
    }
  }, [refresh])

  return {
    status,
    transfers: pushed.transfers ?? status?.transfers ?? null,
    intake: pushed.intake ?? status?.intake ?? null,
    controls: pushed.controls ?? status?.daemon?.controls ?? null,
    events,
    rate,
    connected,
    error,
    refresh
  }
}
