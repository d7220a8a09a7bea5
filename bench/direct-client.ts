// The baseline reader: the engine's stream read directly by the bench process (an HTTP client with a
// keep-alive pool and eventsource-parser, JSON-parsing each data line), exactly as the hub side parses
// what the agent relays. Whatever the agent adds shows up as the difference between the two.
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { benchRequest, newTrace, recordChunk, type StreamTrace } from './trace';

export class DirectClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

  constructor(
    private readonly engineUrl: string,
    private readonly offsetMs: number,
  ) {}

  stream(chunks: number, timeoutMs = 120_000): Promise<StreamTrace> {
    const trace = newTrace();
    const body = JSON.stringify(benchRequest(chunks));
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.engineUrl}/v1/chat/completions`, {
        method: 'POST',
        agent: this.agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), accept: 'text/event-stream' },
      });
      const timer = setTimeout(() => req.destroy(new Error(`direct stream not finished within ${timeoutMs} ms`)), timeoutMs);
      const parser = createParser({
        onEvent: (ev) => {
          if (ev.data === '[DONE]') return;
          recordChunk(trace, JSON.parse(ev.data), this.offsetMs);
        },
      });
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          clearTimeout(timer);
          res.resume();
          reject(new Error(`the bench engine answered ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (text: string) => parser.feed(text));
        res.on('end', () => {
          clearTimeout(timer);
          trace.endAt = performance.timeOrigin + performance.now();
          resolve(trace);
        });
      });
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
