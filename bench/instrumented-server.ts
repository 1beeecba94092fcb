// Starts the real service (src/server.ts) with an event-loop delay monitor and a resident-memory
// sampler, and answers the runner on the IPC channel it was started with; the service itself
// gets no extra route. Messages: {type: 'reset'} clears the delay histogram; {type: 'stats'} is
// answered with the delay percentiles since the last reset and the peak resident memory.
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ServiceStats {
  rssBytes: number;
  peakRssBytes: number;
  /** Event-loop delay since the last reset, milliseconds. */
  eld: { p50: number; p99: number; max: number; mean: number };
  /** Largest event-loop delay over the process's life, milliseconds. */
  eldMaxEver: number;
}

const eld = monitorEventLoopDelay({ resolution: 10 });
const lifetime = monitorEventLoopDelay({ resolution: 10 });
eld.enable();
lifetime.enable();
let peakRss = 0;
const sample = () => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
};
setInterval(sample, 100).unref();

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

process.on('message', (message: { type: string }) => {
  if (message.type === 'reset') {
    eld.reset();
    process.send?.({ type: 'reset-done' });
  } else if (message.type === 'stats') {
    sample();
    const stats: ServiceStats = {
      rssBytes: process.memoryUsage.rss(),
      peakRssBytes: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
      eld: { p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max), mean: ms(eld.mean) },
      eldMaxEver: ms(lifetime.max),
    };
    process.send?.({ type: 'stats', stats });
  }
});
process.channel?.unref();

await import('../src/server.ts');
