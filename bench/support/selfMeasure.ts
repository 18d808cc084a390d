/**
 * How a benchmark process measures itself over its work (startup excluded): wall seconds,
 * CPU seconds of every thread, and peak RSS sampled every 50 ms (apart from the startup's
 * module-loading peak). `finish` prints them as one JSON line, the last on stdout, which
 * bench/run.ts reads.
 */
export const startSelfMeasure = () => {
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 50)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  return {
    finish: (extra: Record<string, unknown>): void => {
      const seconds = (performance.now() - t0) / 1000
      const cpu = process.cpuUsage(cpu0)
      clearInterval(sampler)
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
      process.stdout.write(
        `${JSON.stringify({
          seconds,
          cpuSeconds: (cpu.user + cpu.system) / 1e6,
          systemCpuSeconds: cpu.system / 1e6,
          maxRssMB: peakRss / 2 ** 20,
          ...extra
        })}\n`
      )
    }
  }
}
