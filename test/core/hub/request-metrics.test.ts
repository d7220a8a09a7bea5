// The heartbeat's request figures over a rolling 60 s window (Go keys), and the Go reconnect delays.
import { describe, expect, it } from 'vitest';
import { reconnectDelayMs } from '../../../src/core/hub/link';
import { RequestMetrics } from '../../../src/core/hub/request-metrics';

describe('RequestMetrics', () => {
  it('counts the last 60 s: requests per minute, mean latency, engine-reported tokens per second', () => {
    const t0 = 1_000_000_000_000;
    const m = new RequestMetrics(t0);
    expect(m.snapshot(t0)).toEqual({ total_requests: 0, requests_per_minute: 0, avg_latency_ms: 0, tokens_per_second: 0 });
    m.record({ latencyMs: 100, tokensOut: 60, estimated: false }, t0 + 1000);
    m.record({ latencyMs: 300, tokensOut: 40, estimated: false }, t0 + 2000);
    m.record({ latencyMs: 200, tokensOut: 999, estimated: true }, t0 + 3000); // an estimate: not counted as tokens
    // 10 s since start: 3 requests in 10 s = 18 per minute; 100 reported tokens in 10 s.
    expect(m.snapshot(t0 + 10_000)).toEqual({ total_requests: 3, requests_per_minute: 18, avg_latency_ms: 200, tokens_per_second: 10 });
    // A minute after the first one finished, it has left the window; the total stays.
    expect(m.snapshot(t0 + 61_500)).toEqual({ total_requests: 3, requests_per_minute: 2, avg_latency_ms: 250, tokens_per_second: 0.67 });
    expect(m.snapshot(t0 + 200_000)).toEqual({ total_requests: 3, requests_per_minute: 0, avg_latency_ms: 0, tokens_per_second: 0 });
  });

  it('a bucket reused a minute later starts from zero', () => {
    const t0 = 5_000_000;
    const m = new RequestMetrics(t0 - 120_000);
    m.record({ latencyMs: 10, tokensOut: 5, estimated: false }, t0);
    m.record({ latencyMs: 30, tokensOut: 7, estimated: false }, t0 + 60_000);
    expect(m.snapshot(t0 + 60_000)).toEqual({ total_requests: 2, requests_per_minute: 1, avg_latency_ms: 30, tokens_per_second: 0.12 });
  });
});

describe('reconnectDelayMs (Go reconnect(): immediate, then 1, 2, 4 … s, capped)', () => {
  it('follows the sequence and the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => reconnectDelayMs(n, 30_000))).toEqual([0, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(reconnectDelayMs(3, 200)).toBe(200);
  });
});
