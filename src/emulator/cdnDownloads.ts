/**
 * The CDN's file downloads in flight: how many responses stream at once (and the most so
 * far, which tests read to see how many connections a client opened), and the rate each
 * one is held to when the CDN caps every connection, as many debrid CDNs do (`null`: none).
 */
import type { ServerResponse } from "node:http"

export class CdnDownloads {
  active = 0
  peak = 0
  /** Bytes per second per response (one response at a time per HTTP/1.1 connection), or null. */
  ratePerConnection: number | null

  constructor(ratePerConnection: number | null = null) {
    this.ratePerConnection = ratePerConnection !== null && ratePerConnection > 0 ? ratePerConnection : null
  }

  /**
   * Counts a response while `stream` runs, and no longer once its connection has closed
   * (a client that stopped reading early: the connection is no longer in use).
   */
  async during<A>(response: ServerResponse, stream: () => Promise<A>): Promise<A> {
    this.active++
    this.peak = Math.max(this.peak, this.active)
    let counted = true
    const uncount = () => {
      if (counted) this.active--
      counted = false
    }
    response.once("close", uncount)
    try {
      return await stream()
    } finally {
      uncount()
      response.off("close", uncount)
    }
  }

  /** Starts counting the peak afresh from what streams now. */
  resetPeak(): void {
    this.peak = this.active
  }
}
