/**
 * CDN throughput of the emulator on loopback, measured with curl (the client is not the
 * bottleneck). Usage: node bench/cdn.ts [size GiB, default 4] [parallel streams, default 4]
 *
 * Prints one row per scenario: a single stream of the whole file, and N streams each
 * fetching one Range slice (the way a segmented downloader does).
 */
import { spawn } from "node:child_process"
import { startEmulator } from "../src/emulator/server.ts"

const GiB = 1024 ** 3
const sizeGiB = Number(process.argv[2] ?? "4")
const streams = Number(process.argv[3] ?? "4")
const size = Math.floor(sizeGiB * GiB)

const emulator = await startEmulator({ library: "empty" })
try {
  const file = emulator.control.addFile({ name: "bench.bin", sizeBytes: size })
  const response = await fetch(`${emulator.baseUrl}/files/${file.id}/download-link`, {
    method: "POST",
    headers: { Authorization: `Bearer ${emulator.apiKey}` }
  })
  const body: unknown = await response.json()
  const url = linkUrl(body)

  const single = await curl(url, [])
  const slice = Math.ceil(size / streams)
  const started = performance.now()
  const parts = await Promise.all(
    Array.from({ length: streams }, (_, i) => curl(url, ["-r", `${i * slice}-${Math.min(size, (i + 1) * slice) - 1}`]))
  )
  const seconds = (performance.now() - started) / 1000
  const total = parts.reduce((sum, part) => sum + part.bytes, 0)
  console.log("scenario                      bytes          GB/s")
  console.log(
    `single stream (curl)          ${String(single.bytes).padEnd(14)} ${(single.bytesPerSecond / 1e9).toFixed(2)}`
  )
  console.log(`${streams} range streams (curl)       ${String(total).padEnd(14)} ${(total / seconds / 1e9).toFixed(2)}`)
  if (single.bytes !== size || total !== size) throw new Error("short transfer")
} finally {
  await emulator.close()
}

function linkUrl(body: unknown): string {
  if (typeof body === "object" && body !== null && "data" in body) {
    const data = body.data
    if (typeof data === "object" && data !== null && "url" in data && typeof data.url === "string") return data.url
  }
  throw new Error(`unexpected download-link answer: ${JSON.stringify(body)}`)
}

function curl(url: string, extra: ReadonlyArray<string>): Promise<{ bytes: number; bytesPerSecond: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn("curl", ["-sS", "-o", "/dev/null", "-w", "%{size_download} %{speed_download}", ...extra, url])
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.on("error", reject)
    child.on("exit", (code) => {
      const [bytes = "0", speed = "0"] = out.trim().split(" ")
      if (code === 0) resolve({ bytes: Number(bytes), bytesPerSecond: Number(speed) })
      else reject(new Error(`curl exited with ${code}`))
    })
  })
}
