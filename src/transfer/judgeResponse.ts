/**
 * Whether a CDN response may be written into a segment (pure), for the byte path
 * (leanGet.ts). Anything that could splice two versions of a file is a
 * `restart`; a refused link is `link`; server trouble is `transient`.
 */
import type { Headers } from "./responseHead.ts"
import { fault, type TransferFault } from "./TransferFault.ts"

export interface Validators {
  readonly etag: string | null
  readonly lastModified: string | null
}

export interface ResponseContext {
  readonly url: URL
  /** Whether the request carried a Range header. */
  readonly ranged: boolean
  /** The file's expected size. */
  readonly size: number
  /** First byte asked for and the end (exclusive) asked for. */
  readonly from: number
  readonly to: number
  /** Sees the validators before any byte is accepted; a fault refuses the response. */
  readonly onValidators: (validators: Validators) => TransferFault | undefined
}

export type Judgement =
  | { readonly _tag: "Body"; readonly promisedEnd: number }
  | { readonly _tag: "Redirect"; readonly location: URL }
  | { readonly _tag: "Refused"; readonly fault: TransferFault }

export const judgeResponse = (ctx: ResponseContext, status: number, headers: Headers): Judgement => {
  const refuse = (f: TransferFault): Judgement => ({ _tag: "Refused", fault: f })
  if (REDIRECT_STATUSES.has(status)) {
    const location = header(headers, "location")
    if (location === undefined || !URL.canParse(location, ctx.url.href)) {
      return refuse(fault("fatal", `CDN redirect ${status} without a usable Location`))
    }
    return { _tag: "Redirect", location: new URL(location, ctx.url.href) }
  }
  if (LINK_STATUSES.has(status)) return refuse(fault("link", `CDN answered ${status}`))
  if (status === 416) return refuse(fault("restart", "CDN answered 416 to a range"))
  if (status === 408 || status === 429 || status >= 500) return refuse(fault("transient", `CDN answered ${status}`))
  if (status !== 200 && status !== 206) return refuse(fault("fatal", `CDN answered ${status}`))

  const encoding = header(headers, "content-encoding")
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
    return refuse(fault("fatal", `CDN sent a ${encoding}-encoded body`))
  }
  const validators: Validators = {
    etag: header(headers, "etag") ?? null,
    lastModified: header(headers, "last-modified") ?? null
  }
  const length = parseLength(header(headers, "content-length"))
  let promisedEnd: number
  if (status === 200) {
    if (ctx.ranged && (ctx.from !== 0 || ctx.to !== ctx.size)) {
      const refused = ctx.onValidators(validators)
      return refuse(refused ?? fault("restart", "CDN answered 200 to a ranged request", { noRanges: true }))
    }
    if (ctx.from !== 0) return refuse(fault("restart", "a whole body for a partial segment"))
    if (length !== undefined && length !== ctx.size) {
      return refuse(fault("fatal", `CDN sends ${length} bytes, the file has ${ctx.size}`))
    }
    promisedEnd = ctx.size
  } else {
    const range = parseContentRange(header(headers, "content-range"))
    if (range === undefined) return refuse(fault("restart", "206 without a valid Content-Range"))
    if (range.total !== undefined && range.total !== ctx.size) {
      return refuse(fault("restart", `Content-Range total ${range.total} ≠ size ${ctx.size}`))
    }
    if (range.start !== ctx.from || range.end >= ctx.to || range.end < range.start) {
      return refuse(fault("restart", `Content-Range ${range.start}-${range.end} for bytes ${ctx.from}-${ctx.to - 1}`))
    }
    if (length !== undefined && length !== range.end + 1 - range.start) {
      return refuse(fault("restart", "Content-Length disagrees with Content-Range"))
    }
    promisedEnd = range.end + 1
  }
  const refused = ctx.onValidators(validators)
  return refused === undefined ? { _tag: "Body", promisedEnd } : refuse(refused)
}

/**
 * The GET request head sent to a CDN: Host, Range and If-Range (ranged), Accept-Encoding and
 * User-Agent, nothing that could carry a credential.
 */
export const cdnRequest = (
  url: URL,
  ranged: boolean,
  from: number,
  to: number,
  ifRange: string | null,
  userAgent: string
): string => {
  let text = `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`
  if (ranged) {
    text += `range: bytes=${from}-${to - 1}\r\n`
    if (ifRange !== null) text += `if-range: ${ifRange}\r\n`
  }
  return `${text}accept-encoding: identity\r\nuser-agent: ${userAgent}\r\n\r\n`
}

// ---------------------------------------------------------------------------------------

const LINK_STATUSES = new Set([401, 403, 404, 410])
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

const header = (headers: Headers, name: string): string | undefined => {
  const v = headers[name]
  return typeof v === "string" ? v : v?.[0]
}

const parseLength = (text: string | undefined): number | undefined =>
  text !== undefined && /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined

/** `bytes a-b/total` (total may be `*`). */
const parseContentRange = (
  text: string | undefined
): { readonly start: number; readonly end: number; readonly total: number | undefined } | undefined => {
  const m = text === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/i.exec(text.trim())
  if (m === null) return undefined
  return { start: Number(m[1]), end: Number(m[2]), total: m[3] === "*" ? undefined : Number(m[3]) }
}
