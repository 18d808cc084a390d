/**
 * Sending intakes to the service: caps, the optional cache check, the creation request,
 * selection stages and recovery after a crash.
 *
 *   new ──(caps ok, cache ok)──► look up client_reference ──found──► sent
 *                                     │ none
 *                                     ▼
 *                   sending (stored) ─► POST /downloads(/upload) ─► sent | selecting | new (402, 429)
 *   selecting ─► choice by policy ─► sending ─► POST …/choices ─► sent | selecting | parked
 *   sending found at start (no stored answer) ─► look up client_reference ─► sent | new
 *
 * Invariants:
 * - Every creation request goes out only after `sending` is stored, and only after a lookup
 *   by client_reference (= the identity) found no download: never two downloads for one
 *   intake, whatever crashed where.
 * - The folder it is created in is settled with `sending` (releaseFolder.ts): no other
 *   release, and nothing already on the service, is at the path its files will take.
 * - An account cap or a 402 holds the intake (`cap`: looked at again every CAP_RECHECK_MS,
 *   and whenever a download of the queue ends); a 429 holds it until its Retry-After
 *   (`rate_limit`); a request whose fate is unknown (no answer, 5xx) stays `sending` and is
 *   looked up.
 * - An intake removed while its request was out gets the download id on its tombstone, so
 *   the removal's cleanup deletes what the request created.
 */
import { Duration, Effect, Option } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { type ApiError, retryAfter } from "../api/ApiError.ts"
import type { Limits } from "../api/schemas/account.ts"
import { DownloadId, SelectionId } from "../api/schemas/common.ts"
import type { Download, DownloadOutcome, Selection, SelectionItem } from "../api/schemas/downloads.ts"
import type { CategorySettings } from "../config/categoriesSettings.ts"
import { CATEGORY_DEFAULTS } from "../config/categoriesSettings.ts"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import type { IntakeRecord, IntakeTables, OfferedItem } from "../store/intakeTables.ts"
import type { Store } from "../store/Store.ts"
import { type ActiveCounts, afterOneDownload, capHold } from "./accountCaps.ts"
import { failRelease } from "./releaseCompletion.ts"
import { expectedContentRoot, releaseDirectory } from "./releaseFolder.ts"
import { chooseItem } from "./selectionPolicy.ts"

/** How long a 429 without Retry-After keeps an intake waiting. */
export const RATE_LIMIT_WAIT_MS = 60_000

/** How often the account's limits are read again while a cap (or a 402) holds an intake. */
export const CAP_RECHECK_MS = 60_000

export interface SenderContext {
  readonly api: ApiClient["Service"]
  readonly tables: IntakeTables["Service"]
  readonly events: MirrorEvents["Service"]
  readonly store: Store["Service"]
  readonly categories: Readonly<Record<string, CategorySettings>>
  /** Where the service tells of the download's end (webhooks.public_url), if anywhere. */
  readonly webhookUrl?: string | undefined
  readonly now: number
}

/** The lookup that makes a resend safe: the newest download carrying the identity, if any. */
export const findByReference = (
  api: ApiClient["Service"],
  id: string
): Effect.Effect<Option.Option<Download>, ApiError> =>
  Effect.map(api.downloads.list({ clientReference: id, limit: 1 }), (page) => Option.fromNullishOr(page.items[0]))

/** A `sending` intake with no stored answer (a crash, or a request whose fate is unknown): looked up, then sent or re-queued. */
export const recoverSending = Effect.fn("IntakeSender.recover")(function* (ctx: SenderContext, record: IntakeRecord) {
  const found = yield* findByReference(ctx.api, record.id)
  if (Option.isSome(found)) {
    yield* Effect.logInfo(
      `intake: ${record.name} (${record.id}) was accepted before the answer was lost: ${found.value.id}`
    )
    return yield* accepted(ctx, record, found.value)
  }
  yield* ctx.tables.update(record.id, ["sending"], { phase: "new" }, ctx.now)
})

/**
 * Sends one `new` intake when the caps allow; returns the limits as they stand after it
 * (one fewer daily download when it was accepted).
 */
export const sendNew = Effect.fn("IntakeSender.send")(function* (
  ctx: SenderContext,
  record: IntakeRecord,
  limits: Limits | null,
  active: ActiveCounts
) {
  const isTorrent = record.sourceKind === "magnet" || record.sourceKind === "torrent"
  const hold = limits === null ? undefined : capHold(limits, active, isTorrent)
  if (hold !== undefined) {
    yield* ctx.tables.update(
      record.id,
      ["new"],
      { reason: hold.reason, notBefore: hold.notBefore, heldBy: "cap" },
      ctx.now
    )
    return limits
  }
  const policy = ctx.categories[record.category] ?? CATEGORY_DEFAULTS
  if (policy.cached_only && record.infoHash !== null && !(yield* isCached(ctx.api, record.infoHash))) {
    yield* park(ctx, record, ["new"], `not cached on the service (categories.${record.category}.cached_only = true)`)
    return limits
  }
  const found = yield* findByReference(ctx.api, record.id)
  if (Option.isSome(found)) {
    yield* ctx.tables.update(record.id, ["new"], { phase: "sending" }, ctx.now)
    yield* accepted(ctx, record, found.value)
    return limits
  }
  const directory = yield* settleDirectory(ctx, record)
  const sending = {
    phase: "sending",
    directory,
    directoryCategory: record.category,
    reason: null,
    notBefore: null,
    heldBy: null
  } as const
  if (!(yield* ctx.tables.update(record.id, ["new"], sending, ctx.now))) return limits
  // Listings leave the source out: read it now.
  const full = yield* ctx.tables.get(record.id)
  if (Option.isNone(full)) return limits
  const answer = yield* Effect.result(create(ctx.api, full.value, ctx.webhookUrl))
  if (answer._tag === "Failure") {
    yield* requestFailed(ctx, record, answer.failure)
    return limits
  }
  yield* settle(ctx, record, answer.success)
  return answer.success.kind === "download" && limits !== null ? afterOneDownload(limits) : limits
})

/** A `selecting` intake found at a round: its stage read again and answered. */
export const resumeSelection = Effect.fn("IntakeSender.resumeSelection")(function* (
  ctx: SenderContext,
  record: IntakeRecord
) {
  if (record.selectionId === null) {
    yield* ctx.tables.update(record.id, ["selecting"], { phase: "new" }, ctx.now)
    return
  }
  const selection = yield* Effect.result(ctx.api.selections.get(SelectionId.make(record.selectionId)))
  if (selection._tag === "Failure") {
    if (selection.failure.reason._tag === "NotFound") {
      yield* ctx.tables.update(record.id, ["selecting"], { phase: "new", selectionId: null }, ctx.now)
      return
    }
    return yield* selection.failure
  }
  yield* answerSelection(ctx, record, selection.success)
})

/** Whether a `new` intake may be sent now: not paused, and no hold, or its hold is due a look. */
export const isDue = (record: IntakeRecord, now: number, slotFreed: boolean): boolean => {
  if (record.phase !== "new" || record.paused) return false
  const reached = record.notBefore === null || record.notBefore <= now
  // A cap is looked at again at its reset, when a download of the queue ended, and every minute.
  if (record.heldBy === "cap")
    return slotFreed || now - record.updatedAt >= CAP_RECHECK_MS || (record.notBefore !== null && reached)
  return reached
}

// ---------------------------------------------------------------------------------------

/** The folder to create the release in, given what the service holds and the other releases' paths. */
const settleDirectory = Effect.fnUntraced(function* (ctx: SenderContext, record: IntakeRecord) {
  const taken = new Set<string>()
  for (const name of yield* ctx.store.releases.namesIn(record.category)) {
    taken.add((record.category === "" ? name : `${record.category}/${name}`).toLowerCase())
  }
  for (const other of yield* ctx.tables.live) {
    if (other.id === record.id || other.phase === "new" || other.phase === "parked") continue
    taken.add(
      (other.contentPath ?? expectedContentRoot(other.directory, other.directoryCategory, other.name)).toLowerCase()
    )
  }
  return releaseDirectory(record.sourceKind, record.category, record.name, taken)
})

const create = (
  api: ApiClient["Service"],
  record: IntakeRecord,
  webhookUrl: string | undefined
): Effect.Effect<DownloadOutcome, ApiError> => {
  const common = {
    clientReference: record.id,
    ...(record.directory === "" ? {} : { directory: record.directory }),
    ...(webhookUrl === undefined ? {} : { webhookUrl })
  }
  switch (record.sourceKind) {
    case "magnet":
      return api.downloads.create({ ...common, magnet: new TextDecoder().decode(record.source) })
    case "url":
      return api.downloads.create({ ...common, url: new TextDecoder().decode(record.source) })
    case "torrent":
    case "nzb":
      return api.downloads.upload({
        ...common,
        fileName: record.fileName ?? `${record.name}.${record.sourceKind}`,
        content: record.source,
        contentType: record.sourceKind === "torrent" ? "application/x-bittorrent" : "application/x-nzb"
      })
  }
}

/** Stores what a creation or a choice answered. */
const settle = (ctx: SenderContext, record: IntakeRecord, outcome: DownloadOutcome): Effect.Effect<void, ApiError> =>
  outcome.kind === "download"
    ? accepted(ctx, record, outcome.download)
    : Effect.gen(function* () {
        const stored = yield* ctx.tables.update(
          record.id,
          ["sending"],
          {
            phase: "selecting",
            selectionId: outcome.selection.id,
            selectionExpiresAt: outcome.selection.expires_at ?? null
          },
          ctx.now
        )
        if (stored) yield* answerSelection(ctx, record, outcome.selection)
      })

const accepted = Effect.fnUntraced(function* (ctx: SenderContext, record: IntakeRecord, download: Download) {
  const stored = yield* ctx.tables.update(
    record.id,
    ["sending"],
    {
      phase: "sent",
      downloadId: download.id,
      status: download.status ?? "queued",
      reason: null,
      notBefore: null,
      selectionId: null,
      selectionExpiresAt: null
    },
    ctx.now
  )
  if (stored) {
    yield* Effect.logInfo(`intake: ${record.name} (${record.id}) accepted by the service as ${download.id}`)
    return
  }
  // Removed while the request was out: the tombstone's cleanup deletes what it created.
  yield* ctx.tables.update(record.id, ["removed"], { downloadId: download.id }, ctx.now)
})

const answerSelection = Effect.fnUntraced(function* (
  ctx: SenderContext,
  record: IntakeRecord,
  selection: Selection
): Effect.fn.Return<void, ApiError> {
  if (isExpired(selection.expires_at ?? null, ctx.now)) {
    return yield* park(
      ctx,
      record,
      ["selecting"],
      "the selection expired before it was answered; resume it to start again"
    )
  }
  const policy = (ctx.categories[record.category] ?? CATEGORY_DEFAULTS).selection
  const chosen = record.selectionChoice
  const choice = chosen !== null ? { itemId: chosen } : chooseItem(selection.items, policy)
  if ("problem" in choice) {
    // Kept for the user to choose from (`dlsync status`, the web page) until it expires.
    const reason = `waiting for a choice: ${choice.problem} (categories.${record.category || "<none>"}.selection)`
    yield* ctx.tables.update(
      record.id,
      ["selecting"],
      { reason, selectionItems: selection.items.map(offeredItem) },
      ctx.now
    )
    return yield* Effect.logWarning(`intake: ${record.name} (${record.id}) ${reason}`)
  }
  const sending = { phase: "sending", reason: null, selectionItems: null, selectionChoice: null } as const
  if (!(yield* ctx.tables.update(record.id, ["selecting"], sending, ctx.now))) return
  const answer = yield* Effect.result(ctx.api.selections.choose(selection.id, choice.itemId))
  if (answer._tag === "Failure") return yield* requestFailed(ctx, record, answer.failure)
  yield* settle(ctx, record, answer.success)
})

/** Whether a `selecting` intake is due a look: not when it waits for the user's choice, unless its stage expired. */
export const isSelectionDue = (record: IntakeRecord, now: number): boolean =>
  record.phase === "selecting" &&
  !record.paused &&
  (record.selectionItems === null || record.selectionChoice !== null || isExpired(record.selectionExpiresAt, now))

const isExpired = (expiresAt: string | null, now: number): boolean => {
  const at = expiresAt === null ? Number.NaN : Date.parse(expiresAt)
  return !Number.isNaN(at) && now >= at
}

/** A selection item as offered, with the fields the spec does not show read when present. */
const offeredItem = (item: SelectionItem): OfferedItem => ({
  itemId: item.item_id,
  parentId: item.parent_id ?? null,
  name: typeof item.name === "string" ? item.name : item.item_id,
  size: typeof item.size_bytes === "number" ? item.size_bytes : null,
  selectable: item.selectable
})

/** After an unsafe request failed: wait (402, 429), look it up later (fate unknown), park or fail. */
const requestFailed = Effect.fnUntraced(function* (ctx: SenderContext, record: IntakeRecord, error: ApiError) {
  const r = error.reason
  switch (r._tag) {
    case "RateLimited": {
      const wait = Option.match(retryAfter(error), { onNone: () => RATE_LIMIT_WAIT_MS, onSome: Duration.toMillis })
      const at = ctx.now + (Number.isFinite(wait) ? wait : RATE_LIMIT_WAIT_MS)
      return yield* requeue(
        ctx,
        record,
        `rate limited by the service (429); retrying at ${new Date(at).toISOString()}`,
        at,
        "rate_limit"
      )
    }
    case "PaymentRequired":
      return yield* requeue(
        ctx,
        record,
        `the service refused it for the account's quota (402: ${r.message}); sent as soon as the account's limits allow`,
        null,
        "cap"
      )
    case "Transport":
      if (r.neverSent) return yield* requeue(ctx, record, `the service could not be reached: ${r.message}`, null)
      return yield* Effect.logWarning(
        `intake: ${record.name}: no answer to its request (${r.message}); looked up before sending again`
      )
    case "Server":
      return yield* Effect.logWarning(`intake: ${record.name}: ${error.message}; looked up before sending again`)
    case "Unauthorized":
    case "Forbidden":
      return yield* requeue(ctx, record, `the service refused the credential: ${r.message}`, null)
    case "Conflict":
      return yield* park(
        ctx,
        record,
        ["sending"],
        `the service refused the choice: ${r.message}; resume it to start again`
      )
    default:
      return yield* failRelease(ctx, record, `refused by the service: ${r.message}`)
  }
})

const requeue = (
  ctx: SenderContext,
  record: IntakeRecord,
  reason: string,
  notBefore: number | null,
  heldBy: "cap" | "rate_limit" | null = null
) =>
  Effect.andThen(
    ctx.tables.update(record.id, ["sending"], { phase: "new", reason, notBefore, heldBy, selectionId: null }, ctx.now),
    Effect.logInfo(`intake: ${record.name} waits: ${reason}`)
  )

const park = (
  ctx: SenderContext,
  record: IntakeRecord,
  from: ReadonlyArray<"new" | "selecting" | "sending">,
  reason: string
) =>
  Effect.andThen(
    ctx.tables.update(
      record.id,
      from,
      {
        phase: "parked",
        reason,
        selectionId: null,
        selectionExpiresAt: null,
        selectionItems: null,
        selectionChoice: null
      },
      ctx.now
    ),
    Effect.logWarning(`intake: ${record.name} (${record.id}) parked: ${reason}`)
  )

/** POST /cache/check for one hash; the answer's shape is not shown: `[{hash, cached}]` or `{hash: bool}` are read. */
const isCached = (api: ApiClient["Service"], hash: string): Effect.Effect<boolean, ApiError> =>
  Effect.map(api.cache.check([hash]), (data) => {
    if (Array.isArray(data)) {
      return data.some(
        (entry) =>
          typeof entry === "object" &&
          entry !== null &&
          !Array.isArray(entry) &&
          String(entry.hash).toLowerCase() === hash &&
          entry.cached === true
      )
    }
    if (typeof data === "object" && data !== null) {
      const value = Object.entries(data).find(([k]) => k.toLowerCase() === hash)?.[1]
      return value === true
    }
    return false
  })

export const downloadIdOf = (id: string): DownloadId => DownloadId.make(id)
