// A stand-in for the desktop preload's `window.swan`, for scale.spec.ts only: it hands the real renderer
// 10,000 requests and floods it with live updates, to measure that the list stays smooth. The flows
// against the real agent are in the other specs.
(() => {
  const N = 10000;
  const now = Date.now();
  const models = ['llama-3.1-8b-instruct', 'qwen2.5-7b-instruct', 'mistral-7b-instruct'];
  const request = (i, status) => ({
    id: `req-${String(i).padStart(6, '0')}`,
    source: i % 5 === 0 ? 'local' : 'hub',
    model: models[i % models.length],
    status,
    stream: true,
    startedAt: now - (N - i) * 1000,
    firstTokenAt: now - (N - i) * 1000 + 150,
    ...(status === 'running' ? {} : { finishedAt: now - (N - i) * 1000 + 2150, latencyMs: 2150 }),
    tokensIn: 20 + (i % 30),
    tokensOut: 100 + (i % 50),
    estimated: false,
  });
  const requests = Array.from({ length: N }, (_, i) => request(i, i % 17 === 0 ? 'error' : 'ok'));
  const model = (id) => ({ id, enabled: true, health: 'healthy', endpoints: [], inFlight: 0, queued: 0, maxConcurrent: 4, maxQueue: 32 });
  const snapshot = {
    version: '0.1.0',
    nodeId: 'scale',
    nodeName: 'scale-test',
    link: { state: 'connected', hubUrl: 'ws://hub.invalid/ws', since: now, attempts: 0 },
    pause: { paused: false },
    gpu: { gpus: [], detectedAt: now },
    engines: [],
    models: models.map(model),
    today: { requests: N, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 },
    gateway: { enabled: false, listen: '127.0.0.1:18080', running: false, keys: 0 },
    hasKey: true,
    onboarded: true,
    // The snapshot carries the verdict (required): a plain serving one, so the sidebar and banner render.
    verdict: { state: 'serving', tone: 'ok', label: 'Serving', headline: 'Serving to the Swan network.', reasons: [], routable: models },
  };
  const settings = {
    hubUrl: 'ws://hub.invalid',
    serviceUrl: 'http://hub.invalid',
    nodeName: 'scale-test',
    keySet: true,
    keyStorage: 'config',
    gatewayEnabled: false,
    gatewayListen: '127.0.0.1:18080',
    startAtLogin: false,
    closeToTray: true,
    theme: 'light',
    autoPauseOnGpuBusy: false,
    retentionDays: 365,
  };
  const listeners = new Set();
  let next = N;
  let flood = 0;
  window.swan = {
    transport: 'ipc',
    async invoke(channel) {
      switch (channel) {
        case 'snapshot.get':
          return snapshot;
        case 'settings.get':
          return settings;
        case 'requests.list':
          return requests;
        case 'gpu.history':
          return [];
        case 'requests.text':
          return '';
        default:
          throw new Error(`${channel} is not part of the scale test`);
      }
    },
    onEvents(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
  };
  // Live load: every 250 ms a batch with `perBatch` new requests and their text, as the batcher sends it.
  window.__swanScale = {
    startFlood(perBatch) {
      flood = setInterval(() => {
        const events = [];
        for (let k = 0; k < perBatch; k++) {
          const r = request(next++, 'running');
          r.startedAt = Date.now();
          events.push({ type: 'request.update', request: r }, { type: 'request.text', id: r.id, delta: 'token '.repeat(8) });
        }
        for (const l of listeners) l(events);
      }, 250);
    },
    stopFlood() {
      clearInterval(flood);
    },
  };
})();
