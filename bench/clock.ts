// The engine process stamps chunks with its own clock; this measures how far that clock is from ours
// (the NTP idea: ask for its time, assume it was read half-way through the round trip, keep the
// fastest round trip). Both processes read the same system clock, so the offset is normally a few µs;
// it is measured rather than assumed, and subtracted from every chunk latency.
import http from 'node:http';
import { nowMs } from './bench-engine';

export interface ClockOffset {
  /** engine clock minus ours, in ms. */
  offsetMs: number;
  /** Round trip of the probe the offset came from: the offset is good to ± half of it. */
  rttMs: number;
}

function probe(url: string, agent: http.Agent): Promise<{ t0: number; t1: number; remote: number }> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    http
      .get(`${url}/_bench/clock`, { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const t1 = nowMs();
          try {
            resolve({ t0, t1, remote: (JSON.parse(text) as { t: number }).t });
          } catch (e) {
            reject(e as Error);
          }
        });
      })
      .on('error', reject);
  });
}

export async function measureClockOffset(engineUrl: string, probes = 200): Promise<ClockOffset> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let best: ClockOffset = { offsetMs: 0, rttMs: Number.POSITIVE_INFINITY };
  try {
    for (let i = 0; i < probes; i++) {
      const { t0, t1, remote } = await probe(engineUrl, agent);
      const rtt = t1 - t0;
      if (rtt < best.rttMs) best = { offsetMs: remote - (t0 + t1) / 2, rttMs: rtt };
    }
  } finally {
    agent.destroy();
  }
  return best;
}
