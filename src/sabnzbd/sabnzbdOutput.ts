/**
 * How a SABnzbd answer is written, as SABnzbd's `report()` (api.py) writes it:
 *
 *   error              JSON {"status": false, "error": …}      XML <result><status>False</status><error>…
 *   done (no data)     JSON {"status": true}                   XML <result><status>True</status></result>
 *   data, keyword k    JSON {k: data}                          XML <k>…</k>
 *   data, keyword ""   JSON data itself                        XML <result>…</result>
 *   a file (showlog)   the text as an attachment
 *
 * `output=xml` selects XML (text/xml, with SABnzbd's XmlOutputFactory: a list's items are
 * named by the singular of its key — categories → category, slots → slot — else `item`;
 * booleans as True/False, a null value empty, escaped as xml.sax.saxutils does), anything
 * else JSON (`application/json;charset=UTF-8`).
 * Always no-cache, as SABnzbd sends its API answers.
 */
import { HttpServerResponse } from "effect/http"

export type Reply =
  | { readonly _tag: "Data"; readonly keyword: string; readonly data: unknown }
  | { readonly _tag: "Error"; readonly error: string }
  | { readonly _tag: "Done" }
  | { readonly _tag: "File"; readonly fileName: string; readonly text: string }

export const report = (keyword: string, data: unknown): Reply => ({ _tag: "Data", keyword, data })
export const problem = (error: string): Reply => ({ _tag: "Error", error })
export const done: Reply = { _tag: "Done" }

/** The reply as its JSON value (a file has none: it is sent as text). */
export const jsonOf = (reply: Reply): unknown => {
  switch (reply._tag) {
    case "Error":
      return { status: false, error: reply.error }
    case "Done":
      return { status: true }
    case "Data":
      return reply.keyword === "" ? reply.data : { [reply.keyword]: reply.data }
    case "File":
      return reply.text
  }
}

/** The reply as SABnzbd's XML document. */
export const xmlOf = (reply: Reply): string => {
  const body =
    reply._tag === "Error"
      ? element("result", { status: false, error: reply.error })
      : reply._tag === "Data"
        ? element(reply.keyword === "" ? "result" : reply.keyword, reply.data)
        : element("result", { status: true })
  return `<?xml version="1.0" encoding="UTF-8" ?>\n${body}\n`
}

export const respond = (params: ReadonlyMap<string, string>, reply: Reply, status = 200) => {
  const headers = { "cache-control": "no-store", pragma: "no-cache" }
  if (reply._tag === "File") {
    return HttpServerResponse.text(reply.text, {
      status,
      contentType: "application/x-download;charset=utf-8",
      headers: { ...headers, "content-disposition": `attachment;filename="${reply.fileName}"` }
    })
  }
  return params.get("output") === "xml"
    ? HttpServerResponse.text(xmlOf(reply), { status, contentType: "text/xml", headers })
    : HttpServerResponse.text(JSON.stringify(jsonOf(reply)), {
        status,
        contentType: "application/json;charset=UTF-8",
        headers
      })
}

// ---------------------------------------------------------------------------------------

/** XmlOutputFactory's names for the items of a list, by the list's key. */
const SINGULAR: Readonly<Record<string, string>> = {
  categories: "category",
  servers: "server",
  rss: "feed",
  scripts: "script",
  warnings: "warning",
  files: "file",
  jobs: "job"
}

const element = (name: string, value: unknown): string => {
  if (Array.isArray(value)) {
    const items = value
      .map((item) =>
        Array.isArray(item)
          ? element(SINGULAR[name] ?? "list", item)
          : isObject(item)
            ? element(SINGULAR[name] ?? "slot", item)
            : `<${SINGULAR[name] ?? "item"}>${escapeXml(scalar(item, "None"))}</${SINGULAR[name] ?? "item"}>\n`
      )
      .join("")
    return `<${name}>${items}</${name}>\n`
  }
  if (isObject(value)) {
    return `<${name}>${Object.entries(value)
      .map(([k, v]) => element(k, v))
      .join("")}</${name}>\n`
  }
  return `<${name}>${escapeXml(scalar(value, ""))}</${name}>\n`
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Python's str() of a JSON scalar; `none` for null (a list item says "None", a value nothing). */
const scalar = (value: unknown, none: string): string =>
  value === true ? "True" : value === false ? "False" : value === null || value === undefined ? none : String(value)

const escapeXml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
