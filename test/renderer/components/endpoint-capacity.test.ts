// The Engines & models endpoint table: capacity with its source, the state (loading amber, a refused key
// red) and the engine model behind an announced id, rendered as the console renders it.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ModelState } from '../../../src/shared/types';
import { EndpointCapacity } from '../../../src/renderer/components/EndpointCapacity';

const model = (id: string, ep: Partial<ModelState['endpoints'][0]>): ModelState => ({
  id,
  enabled: true,
  health: 'healthy',
  inFlight: 0,
  queued: 0,
  maxConcurrent: 2,
  maxQueue: 32,
  endpoints: [{ url: 'http://127.0.0.1:8080', engineType: 'llamacpp', health: 'healthy', inFlight: 1, maxConcurrent: 2, consecutiveFailures: 0, ...ep }],
});

describe('EndpointCapacity', () => {
  it('shows slots and their source, the engine model, and conditions with their tone', async () => {
    const html = renderToStaticMarkup(
      createElement(EndpointCapacity, {
        models: [
          model('tiny', { capacitySource: 'llama.cpp /props total_slots', localModel: '/srv/models/tiny.gguf' }),
          model('keyed', {
            url: 'http://127.0.0.1:8081',
            health: 'unhealthy',
            condition: 'key_rejected',
            lastError: 'engine refuses our key: GET /props answered 401',
          }),
          model('loader', { url: 'http://127.0.0.1:8082', health: 'unhealthy', condition: 'loading' }),
        ],
      }),
    );
    expect(html).toContain('1 / 2');
    expect(html).toContain('llama.cpp /props total_slots');
    expect(html).toContain('engine model: /srv/models/tiny.gguf');
    expect(html).toMatch(/badge-bad"[^>]*>engine refuses our key</);
    expect(html).toMatch(/badge-warn"[^>]*>loading</);
  });
});

describe('EndpointCapacity: the deep health check per model', () => {
  it('shows a dead engine behind a live model list as an engine error, when the 1-token chat last answered, and non-chat models as not probed', async () => {
    const at = Date.UTC(2026, 0, 5, 9, 30, 0);
    const html = renderToStaticMarkup(
      createElement(EndpointCapacity, {
        models: [
          model('dead', {
            health: 'unhealthy',
            condition: 'engine_error',
            lastError: 'engine error: a 1-token chat to "dead" answered 500',
            deepCheck: { at, ok: false, code: 'engine_error', error: 'x' },
          }),
          model('fine', { url: 'http://127.0.0.1:8083', deepCheck: { at, ok: true } }),
          model('missing', { url: 'http://127.0.0.1:8084', health: 'unhealthy', condition: 'not_served', deepCheck: { at, ok: false, code: 'not_served' } }),
          model('embed', { url: 'http://127.0.0.1:8085', deepCheckSkipped: true }),
        ],
      }),
    );
    expect(html).toMatch(/badge-bad"[^>]*>engine error on a 1-token chat</);
    expect(html).toMatch(/badge-bad"[^>]*>model not served here</);
    expect(html).toMatch(/data-testid="endpoint-deep-dead-[^"]*" data-deep="engine_error">1-token chat failed at/);
    expect(html).toMatch(/data-testid="endpoint-deep-fine-[^"]*" data-deep="ok">answered a 1-token chat at/);
    expect(html).toContain('not probed with chat (not a chat model)');
  });
});
