/**
 * The categories an app sends its releases to: the Category field of each of its enabled
 * qBittorrent and SABnzbd download clients (GET downloadclient; DownloadClient/
 * DownloadClientController.cs, fields as in Download/Clients/QBittorrent/QBittorrentSettings.cs
 * and Sabnzbd/SabnzbdSettings.cs). Each is a folder under the mirror root. Pure.
 */
import type { ArrApp } from "./ArrApp.ts"
import type { DownloadClients } from "./arrSchemas.ts"

const CLIENTS = new Set(["QBittorrent", "Sabnzbd"])

export const appCategories = (app: ArrApp, clients: DownloadClients): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const client of clients) {
    if (!client.enable || !CLIENTS.has(client.implementation)) continue
    const value = client.fields.find((f) => f.name === app.categoryField)?.value
    if (typeof value === "string" && value.trim() !== "") out.add(value.trim())
  }
  return [...out]
}
