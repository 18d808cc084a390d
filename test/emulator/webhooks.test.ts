import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { WebhookSender, webhookUrlProblem } from "../../src/emulator/webhooks.ts"

/**
 * A receiver's verification written from the spec's "Signature" steps, independent of the
 * sender: strict base64 of the secret after `whsec_`, HMAC-SHA-256 over
 * `id.timestamp.` + raw body, any `v1,<base64>` entry matching in constant time.
 */
const verifySignature = (secret: string, headers: IncomingHttpHeaders, body: Buffer): boolean => {
  if (!secret.startsWith("whsec_")) return false
  const key = strictBase64(secret.slice("whsec_".length))
  const id = headers["webhook-id"]
  const timestamp = headers["webhook-timestamp"]
  const signatures = headers["webhook-signature"]
  if (key === undefined || typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") {
    return false
  }
  const expected = createHmac("sha256", key)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), body]))
    .digest()
  return signatures.split(" ").some((entry) => {
    const comma = entry.indexOf(",")
    if (comma < 0 || entry.slice(0, comma) !== "v1") return false
    const given = strictBase64(entry.slice(comma + 1))
    return given !== undefined && given.length === expected.length && timingSafeEqual(given, expected)
  })
}

const strictBase64 = (text: string): Buffer | undefined => {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined
  const bytes = Buffer.from(text, "base64")
  return bytes.toString("base64") === text ? bytes : undefined
}

interface Receipt {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  readonly arrivedAt: number
  respondedAt: number
}

type Reply = { readonly status: number; readonly headers?: Record<string, string>; readonly delayMs?: number }

/** A receiver on 127.0.0.1 answering the n-th request (0-based) with `script(n)`. */
const startReceiver = async (script: (n: number) => Reply) => {
  const receipts: Array<Receipt> = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  let inFlight = 0
  let maxInFlight = 0
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    const arrivedAt = Date.now()
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const receipt: Receipt = {
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        arrivedAt,
        respondedAt: 0
      }
      const reply = script(receipts.length)
      receipts.push(receipt)
      setTimeout(() => {
        inFlight--
        receipt.respondedAt = Date.now()
        res.writeHead(reply.status, reply.headers)
        res.end(() => {
          for (const w of waiters.filter((w) => receipts.length >= w.n)) w.resolve()
        })
      }, reply.delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = portOf(server.address())
  servers.push(server)
  return {
    url: `http://127.0.0.1:${port}/hook`,
    receipts,
    maxInFlight: () => maxInFlight,
    /** Resolves once `n` requests have been answered. */
    received: (n: number) =>
      new Promise<void>((resolve) => {
        if (receipts.length >= n && receipts.slice(0, n).every((r) => r.respondedAt > 0)) resolve()
        else waiters.push({ n, resolve })
      })
  }
}

const portOf = (address: AddressInfo | string | null): number => {
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  return address.port
}

const servers: Array<Server> = []
const senders: Array<WebhookSender> = []
afterEach(async () => {
  for (const s of senders.splice(0)) s.dispose()
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve())
          s.closeAllConnections()
        })
    )
  )
})

const makeSender = (overrides: Partial<ConstructorParameters<typeof WebhookSender>[0]> = {}) => {
  let now = 1_800_000_000_000
  const sender = new WebhookSender({
    now: () => now,
    allowLoopbackHttp: true,
    minIntervalMs: 40,
    backoffBaseMs: 60,
    backoffMaxMs: 500,
    retryAfterUnitMs: 50,
    random: () => 0.5,
    ...overrides
  })
  senders.push(sender)
  return {
    sender,
    advanceClock: (ms: number) => {
      now += ms
    }
  }
}

const event = (id: string) => ({
  id,
  type: "download.completed" as const,
  data: { id: `dl_${id}`, status: "completed" }
})

const ids = (receipts: ReadonlyArray<Receipt>) => receipts.map((r) => r.headers["webhook-id"])

describe("webhook signature", () => {
  it("signs each attempt of identical payload bytes with a fresh timestamp, verifiable per the spec", async () => {
    const receiver = await startReceiver((n) => ({ status: n === 0 ? 500 : 204 }))
    const { sender, advanceClock } = makeSender()
    const secret = sender.secretFor("apiKey:usr_a")
    sender.enqueue(receiver.url, "apiKey:usr_a", event("evt_1"))
    await receiver.received(1)
    advanceClock(7000)
    await receiver.received(2)
    await sender.whenIdle()
    const [first, second] = receiver.receipts
    if (first === undefined || second === undefined) throw new Error("two attempts expected")
    expect(verifySignature(secret, first.headers, first.body)).toBe(true)
    expect(verifySignature(secret, second.headers, second.body)).toBe(true)
    expect(second.body.equals(first.body)).toBe(true)
    expect(first.headers["webhook-id"]).toBe("evt_1")
    expect(second.headers["webhook-id"]).toBe("evt_1")
    expect(Number(second.headers["webhook-timestamp"]) - Number(first.headers["webhook-timestamp"])).toBe(7)
    expect(second.headers["webhook-signature"]).not.toBe(first.headers["webhook-signature"])
    expect(JSON.parse(first.body.toString())).toMatchObject({
      id: "evt_1",
      type: "download.completed",
      data: { id: "dl_evt_1" }
    })
    // a tampered body or another secret does not verify
    expect(verifySignature(secret, first.headers, Buffer.from(`${first.body} `))).toBe(false)
    expect(verifySignature(sender.secretFor("oauth:other"), first.headers, first.body)).toBe(false)
  })

  it("makes one whsec_ secret of 32 strict-base64 bytes per credential", () => {
    const { sender } = makeSender()
    const a = sender.secretFor("apiKey:usr_a")
    expect(a).toMatch(/^whsec_/)
    expect(strictBase64(a.slice(6))?.length).toBe(32)
    expect(sender.secretFor("apiKey:usr_a")).toBe(a)
    expect(sender.secretFor("oauth:client")).not.toBe(a)
  })
})

describe("webhook delivery", () => {
  it("keeps at most one request in flight per origin and waits the pacing interval between requests", async () => {
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 20 }))
    const { sender } = makeSender({ minIntervalMs: 60 })
    for (const id of ["e1", "e2", "e3", "e4"]) sender.enqueue(receiver.url, "apiKey:usr_a", event(id))
    await receiver.received(4)
    await sender.whenIdle()
    expect(ids(receiver.receipts)).toEqual(["e1", "e2", "e3", "e4"])
    expect(receiver.maxInFlight()).toBe(1)
    for (let i = 1; i < receiver.receipts.length; i++) {
      const previous = receiver.receipts[i - 1]
      const current = receiver.receipts[i]
      if (previous === undefined || current === undefined) throw new Error("missing receipt")
      expect(current.arrivedAt - previous.respondedAt).toBeGreaterThanOrEqual(59)
    }
  })

  it("keeps pacing an origin whose queue drained in between", async () => {
    const receiver = await startReceiver(() => ({ status: 200 }))
    const { sender } = makeSender({ minIntervalMs: 80 })
    sender.enqueue(receiver.url, "apiKey:usr_a", event("e1"))
    await sender.whenIdle()
    sender.enqueue(receiver.url, "apiKey:usr_a", event("e2"))
    await sender.whenIdle()
    const [first, second] = receiver.receipts
    if (first === undefined || second === undefined) throw new Error("missing receipt")
    expect(second.arrivedAt - first.respondedAt).toBeGreaterThanOrEqual(79)
  })

  it("pauses the whole origin after a 503 (shared backoff) and retries the failed event first", async () => {
    const receiver = await startReceiver((n) => ({ status: n === 0 ? 503 : 200 }))
    const { sender } = makeSender({ minIntervalMs: 1, backoffBaseMs: 120 })
    sender.enqueue(receiver.url, "apiKey:usr_a", event("a"))
    sender.enqueue(receiver.url, "apiKey:usr_a", event("b"))
    await receiver.received(3)
    await sender.whenIdle()
    const [first, second] = receiver.receipts
    if (first === undefined || second === undefined) throw new Error("missing receipt")
    expect(ids(receiver.receipts)).toEqual(["a", "a", "b"])
    // base 120 ms with jitter 0.8..1.2 (random 0.5 → exactly 120 ms)
    expect(second.arrivedAt - first.respondedAt).toBeGreaterThanOrEqual(115)
    expect(sender.attempts.map((a) => a.outcome)).toEqual([503, 200, 200])
  })

  it("honours Retry-After on 429", async () => {
    const receiver = await startReceiver((n) =>
      n === 0 ? { status: 429, headers: { "retry-after": "4" } } : { status: 200 }
    )
    const { sender } = makeSender({ minIntervalMs: 1, backoffBaseMs: 5 })
    sender.enqueue(receiver.url, "apiKey:usr_a", event("a"))
    await receiver.received(2)
    const [first, second] = receiver.receipts
    if (first === undefined || second === undefined) throw new Error("missing receipt")
    // 4 "seconds" of 50 ms each, far above the 5 ms backoff
    expect(second.arrivedAt - first.respondedAt).toBeGreaterThanOrEqual(195)
  })

  it("retries an event answered with another non-2xx status after the others (no shared pause)", async () => {
    const receiver = await startReceiver((n) => ({ status: n === 0 ? 400 : 200 }))
    const { sender } = makeSender({ minIntervalMs: 1, backoffBaseMs: 80 })
    sender.enqueue(receiver.url, "apiKey:usr_a", event("a"))
    sender.enqueue(receiver.url, "apiKey:usr_a", event("b"))
    await receiver.received(3)
    expect(ids(receiver.receipts)).toEqual(["a", "b", "a"])
  })

  it("does not follow redirects: a 302 is a failed attempt at the same URL", async () => {
    const receiver = await startReceiver((n) =>
      n === 0 ? { status: 302, headers: { location: "/elsewhere" } } : { status: 200 }
    )
    const { sender } = makeSender({ minIntervalMs: 1, backoffBaseMs: 10 })
    sender.enqueue(receiver.url, "apiKey:usr_a", event("a"))
    await receiver.received(2)
    await sender.whenIdle()
    expect(receiver.receipts.map((r) => r.path)).toEqual(["/hook", "/hook"])
  })

  it("keeps an event pending through connection failures (at least once, no attempt cap)", async () => {
    const receiver = await startReceiver(() => ({ status: 200 }))
    const url = receiver.url
    const server = servers.pop()
    await new Promise<void>((resolve) => server?.close(() => resolve()))
    let thirdAttempt: () => void = () => {}
    const attempted = new Promise<void>((resolve) => {
      thirdAttempt = resolve
    })
    const { sender } = makeSender({
      minIntervalMs: 1,
      backoffBaseMs: 5,
      backoffMaxMs: 10,
      onAttempt: () => {
        if (sender.attempts.length === 3) thirdAttempt()
      }
    })
    sender.enqueue(url, "apiKey:usr_a", event("a"))
    await attempted
    expect(sender.attempts.every((a) => a.outcome === "connection_error")).toBe(true)
    expect(sender.pending()).toBe(1)
  })
})

describe("webhook_url rule", () => {
  it.each([
    ["https://hooks.example.com/x", false, undefined],
    ["http://hooks.example.com/x", false, "https"],
    ["https://localhost/x", false, "public"],
    ["https://10.1.2.3/x", false, "public"],
    ["https://[::1]/x", false, "public"],
    ["https://printer.local/x", false, "public"],
    ["https://intranet/x", false, "public"],
    ["http://127.0.0.1:8080/x", false, "https"],
    ["http://127.0.0.1:8080/x", true, undefined],
    ["http://10.0.0.1/x", true, "https"],
    ["not a url", false, "absolute"]
  ])("%s (loopback allowed: %s)", (url, allowLoopback, problem) => {
    const result = webhookUrlProblem(url, allowLoopback)
    if (problem === undefined) expect(result).toBeUndefined()
    else expect(result).toContain(problem)
  })
})
