// The verdict: each state, its stable code, its next step, and the order of findings (worst first).
import { describe, expect, it } from 'vitest';
import { verdictOf, type VerdictInputs } from '../../../src/core/bridge/verdict';
import type { CatalogueView, ProviderStatusView } from '../../../src/shared/views/snapshot';
import type { EndpointState, ModelState } from '../../../src/shared/types';

const ep = (o: Partial<EndpointState> = {}): EndpointState => ({
  url: 'http://127.0.0.1:8080',
  engineType: 'llamacpp',
  health: 'healthy',
  inFlight: 0,
  maxConcurrent: 1,
  consecutiveFailures: 0,
  ...o,
});
const model = (id: string, o: Partial<ModelState> = {}): ModelState => ({
  id,
  enabled: true,
  health: 'healthy',
  endpoints: [ep()],
  inFlight: 0,
  queued: 0,
  maxConcurrent: 1,
  maxQueue: 8,
  ...o,
});
const status = (o: Partial<ProviderStatusView> = {}): ProviderStatusView => ({
  state: 'ok',
  url: 'http://p',
  nextSteps: [],
  status: 'active',
  earningsEnabled: true,
  ...o,
});
const catalogue = (known: Record<string, boolean>, matched: Record<string, string> = {}): CatalogueView => ({
  state: 'ok',
  url: 'http://p/api/v1/models',
  fetchedAt: 1,
  size: 8,
  models: Object.fromEntries(
    Object.entries(known).map(([id, k]) => [id, { known: k, source: 'engine', suggestions: [], ...(matched[id] ? { matchedId: matched[id] } : {}) }]),
  ),
});

function inputs(o: Partial<VerdictInputs> = {}): VerdictInputs {
  return {
    running: true,
    hasKey: true,
    hubEnabled: true,
    link: { state: 'connected' },
    pause: { paused: false },
    providerStatus: status(),
    models: [model('a'), model('b')],
    catalogue: catalogue({ a: true, b: true }),
    earningsEnabled: true,
    pricing: { known: true, priced: ['a', 'b', 'c'] },
    ...o,
  };
}

const codes = (v: ReturnType<typeof verdictOf>) => v.reasons.map((r) => r.code);

describe('verdict', () => {
  it('serving and routable: routed and earning, nothing else to say', () => {
    const v = verdictOf(inputs());
    expect(v).toMatchObject({ state: 'serving', tone: 'ok', label: 'Serving', reasons: [], routable: ['a', 'b'] });
    expect(v.headline).toMatch(/Serving 2 models/);
  });

  it('the serving line names where it serves: the Swan network unless told otherwise', () => {
    expect(verdictOf(inputs()).headline).toBe('Serving 2 models to the Swan network: routed and earning.');
    expect(verdictOf(inputs({ networkName: 'a simulated network (a dev hub)' })).headline).toBe(
      'Serving 2 models to a simulated network (a dev hub): routed and earning.',
    );
  });

  it('stopped: agent not running, no key, key refused, connecting off, awaiting approval, link down, paused, nothing to serve', () => {
    const cases: Array<[Partial<VerdictInputs>, string, string]> = [
      [{ running: false }, 'agent_stopped', 'Stopped'],
      [{ hasKey: false }, 'no_key', 'No provider key'],
      [{ link: { state: 'auth_failed' } }, 'key_refused', 'Key refused'],
      [{ link: { state: 'idle' }, providerStatus: status({ state: 'invalid_key' }) }, 'key_refused', 'Key refused'],
      [{ hubEnabled: false, link: { state: 'idle' } }, 'hub_disabled', 'Not connecting'],
      [
        {
          link: { state: 'idle' },
          providerStatus: status({ state: 'waiting', status: 'pending', stepLabel: 'Request approval', nextSteps: ['Request approval on your provider page'] }),
        },
        'awaiting_approval',
        'Awaiting approval',
      ],
      [{ link: { state: 'connecting' } }, 'connecting', 'Connecting'],
      [{ link: { state: 'backoff', reason: 'hub unreachable, retrying in 4 s' } }, 'link_down', 'Disconnected'],
      [{ pause: { paused: true, cause: 'manual', reason: 'paused by you' } }, 'paused', 'Paused'],
      [{ models: [] }, 'nothing_to_serve', 'Connected, nothing to serve'],
      [{ models: [model('a', { enabled: false })] }, 'none_switched_on', 'Connected, nothing to serve'],
    ];
    for (const [o, code, label] of cases) {
      const v = verdictOf(inputs(o));
      expect({ code: codes(v), state: v.state, label: v.label }).toEqual({ code: [code], state: 'stopped', label });
      expect(v.routable).toEqual([]);
    }
    expect(verdictOf(inputs({ link: { state: 'backoff', reason: 'hub unreachable' } })).headline).toContain('hub unreachable');
    expect(verdictOf(inputs({ pause: { paused: true, cause: 'manual' } })).tone).toBe('warn');
    expect(verdictOf(inputs({ link: { state: 'auth_failed' } })).tone).toBe('bad');
    const waiting = verdictOf(
      inputs({
        link: { state: 'idle' },
        providerStatus: status({ state: 'waiting', stepLabel: 'Request approval', nextSteps: ['Request approval on your provider page'] }),
      }),
    );
    expect(waiting.reasons[0]?.next).toBe('Request approval on your provider page');
  });

  it('degraded: an engine down names the model, the address and the reason; nothing routed is bad, a part is a warning', () => {
    const down = model('a', {
      health: 'unhealthy',
      endpoints: [ep({ health: 'unhealthy', condition: 'down', lastError: 'the engine at http://127.0.0.1:8080 refused the connection (not running?)' })],
    });
    const all = verdictOf(inputs({ models: [down], catalogue: catalogue({ a: true }) }));
    expect(all).toMatchObject({ state: 'degraded', tone: 'bad', label: 'Engine down', routable: [] });
    expect(all.reasons[0]).toMatchObject({ code: 'engine_down', models: ['a'] });
    expect(all.headline).toContain('refused the connection');
    expect(all.reasons[0]?.next).toMatch(/Start the engine/);
    const part = verdictOf(inputs({ models: [down, model('b')] }));
    expect(part).toMatchObject({ state: 'degraded', tone: 'warn', routable: ['b'] });
    expect(part.headline).toMatch(/^Serving b\. /);
    const keyed = verdictOf(
      inputs({
        models: [model('a', { health: 'unhealthy', endpoints: [ep({ health: 'unhealthy', condition: 'key_rejected', lastError: 'engine refuses our key' })] })],
      }),
    );
    expect(codes(keyed)).toEqual(['model_unhealthy']);
    expect(keyed.reasons[0]?.next).toMatch(/api_key/);
    expect(codes(verdictOf(inputs({ models: [model('a', { health: 'degraded' }), model('b')] })))).toEqual(['model_degraded']);
  });

  it('serving but not routable: a model the catalogue does not list, or the hub did not register', () => {
    const v = verdictOf(inputs({ catalogue: catalogue({ a: true, b: false }, { b: 'meta-llama/Llama-3.2-1B-Instruct' }) }));
    expect(v).toMatchObject({ state: 'not_routable', tone: 'warn', label: 'Not routed', routable: ['a'] });
    expect(v.reasons[0]).toMatchObject({ code: 'not_in_catalogue', models: ['b'] });
    expect(v.reasons[0]?.next).toContain('meta-llama/Llama-3.2-1B-Instruct');
    const none = verdictOf(inputs({ catalogue: catalogue({ a: false, b: false }) }));
    expect(none).toMatchObject({ state: 'not_routable', tone: 'bad', routable: [] });
    const reg = verdictOf(inputs({ registeredModels: ['a'] }));
    expect(reg.reasons).toEqual([expect.objectContaining({ code: 'not_registered', models: ['b'] })]);
  });

  it('a catalogue that could not be read makes routing unknown, never a pass (issue 40)', () => {
    const failed = verdictOf(inputs({ catalogue: { state: 'error', url: 'http://p/api/v1/models', error: 'HTTP 404', size: 0, models: {} } }));
    expect(failed).toMatchObject({ state: 'unknown', tone: 'warn', label: 'Routing unknown', routable: ['a', 'b'] });
    expect(codes(failed)).toEqual(['routing_unknown']);
    expect(failed.headline).not.toMatch(/^Serving|routed and earning/);
    expect(failed.reasons[0]?.text).toContain('HTTP 404');
    expect(codes(verdictOf(inputs({ catalogue: { state: 'idle', url: 'x', size: 0, models: {} } })))).toEqual(['routing_unknown']);
    expect(codes(verdictOf(inputs({ catalogue: undefined })))).toEqual(['routing_unknown']);
  });

  it('pay: a price list not read is unknown; a routed model without a rate is not priced (issue 40)', () => {
    const unread = verdictOf(inputs({ pricing: { known: false, priced: [], error: 'HTTP 404' } }));
    expect(unread).toMatchObject({ state: 'unknown', label: 'Pay unknown' });
    expect(codes(unread)).toEqual(['pricing_unknown']);
    expect(codes(verdictOf(inputs({ pricing: undefined })))).toEqual(['pricing_unknown']);
    const half = verdictOf(inputs({ pricing: { known: true, priced: ['a'] } }));
    expect(half).toMatchObject({ state: 'not_earning', tone: 'warn', label: 'Not earning' });
    expect(half.reasons).toEqual([expect.objectContaining({ code: 'not_priced', models: ['b'] })]);
  });

  it("the hub's notices feed it: reputation low and withheld traffic are not green; old and info notices are not (issue 40)", () => {
    const now = 10 * 24 * 3_600_000;
    const rep = { event: 'reputation_dropped', severity: 'warning' as const, message: 'Reputation fell to 0.41.', receivedAt: now - 60_000 };
    const v = verdictOf(inputs({ now, notices: [rep] }));
    expect(v).toMatchObject({ state: 'not_routable', tone: 'warn', label: 'Reputation low' });
    expect(codes(v)).toEqual(['reputation_low']);
    expect(v.headline).not.toMatch(/^Serving/);
    const held = verdictOf(
      inputs({ now, notices: [{ event: 'traffic_withheld', severity: 'critical', modelId: 'b', message: 'Too many failures.', receivedAt: now - 1000 }] }),
    );
    expect(held.reasons).toEqual([expect.objectContaining({ code: 'traffic_withheld', models: ['b'] })]);
    expect(held.headline).toMatch(/^Serving a\. /);
    expect(verdictOf(inputs({ now, notices: [{ ...rep, receivedAt: now - 25 * 3_600_000 }] })).state).toBe('serving');
    expect(verdictOf(inputs({ now, notices: [{ ...rep, severity: 'info' }] })).state).toBe('serving');
  });

  it('the headline never starts "Serving X." when X is failing (issue 40)', () => {
    const v = verdictOf(inputs({ models: [model('a', { health: 'degraded' }), model('b')] }));
    expect(v.headline).toMatch(/^Serving b\. a answers with errors/);
    const only = verdictOf(inputs({ models: [model('a', { health: 'degraded' })], catalogue: catalogue({ a: true }) }));
    expect(only.headline).toMatch(/^a answers with errors/);
  });

  it('"Connected, nothing to serve" is amber, not red (issue 40)', () => {
    expect(verdictOf(inputs({ models: [] })).tone).toBe('warn');
    expect(verdictOf(inputs({ models: [model('a', { enabled: false })] })).tone).toBe('warn');
  });

  it('not earning: earnings not enabled, or the provider under review, each with the next step', () => {
    const off = verdictOf(inputs({ earningsEnabled: false, providerStatus: status({ earningsEnabled: false }) }));
    expect(off).toMatchObject({ state: 'not_earning', tone: 'warn', label: 'Not earning', routable: ['a', 'b'] });
    expect(codes(off)).toEqual(['earnings_disabled']);
    expect(off.reasons[0]?.next).toBeTruthy();
    const review = verdictOf(
      inputs({
        earningsEnabled: false,
        providerStatus: status({
          status: 'under_review',
          stepLabel: 'Under review',
          earningsEnabled: false,
          nextSteps: ['Wait for admin review (typically 1-3 business days)'],
        }),
      }),
    );
    expect(codes(review)).toEqual(['under_review']);
    expect(review.reasons[0]?.next).toBe('Wait for admin review (typically 1-3 business days)');
  });

  it('findings worst first: an engine down before a model off the catalogue before unpaid', () => {
    const down = model('c', { health: 'unhealthy', endpoints: [ep({ health: 'unhealthy', condition: 'down' })] });
    const v = verdictOf(
      inputs({
        models: [model('a'), model('b'), down],
        catalogue: catalogue({ a: true, b: false, c: true }),
        earningsEnabled: false,
        providerStatus: status({ earningsEnabled: false }),
      }),
    );
    expect(codes(v)).toEqual(['engine_down', 'not_in_catalogue', 'earnings_disabled']);
    expect(v.state).toBe('degraded');
    // Unpaid is not said when nothing is routed: the reason nothing is paid is that nothing is routed.
    expect(codes(verdictOf(inputs({ catalogue: catalogue({ a: false, b: false }), earningsEnabled: false })))).toEqual(['not_in_catalogue']);
  });
});

describe('verdict: self-healing and the self-check (health & records)', () => {
  it('a withdrawn model is not routed (model_withdrawn), with what was seen', () => {
    const v = verdictOf(
      inputs({
        models: [
          model('a', { withdrawn: { reason: 'error_rate', since: 1, detail: '10 of 10 requests failed (100 %) while its health checks passed' } }),
          model('b'),
        ],
      }),
    );
    expect(codes(v)).toEqual(['model_withdrawn']);
    expect(v).toMatchObject({
      state: 'not_routable',
      routable: ['b'],
      reasons: [{ models: ['a'], text: expect.stringContaining('10 of 10 requests failed') }],
    });
  });

  it('a model held by a paused GPU is not routed (model_gpu_paused) while its neighbour is; unknown placement is said', () => {
    const v = verdictOf(inputs({ models: [model('a', { gpuHold: { gpu: 0, cause: 'gpu_busy', placement: 'owner' } }), model('b')] }));
    expect(codes(v)).toEqual(['model_gpu_paused']);
    expect(v).toMatchObject({ state: 'not_routable', routable: ['b'], reasons: [{ models: ['a'], next: expect.stringContaining('GPU 0') }] });
    const unknown = verdictOf(inputs({ models: [model('a', { gpuHold: { gpu: 1, cause: 'given_back', placement: 'unknown' } })] }));
    expect(unknown.reasons[0]!.text).toContain('not known');
    expect(unknown.routable).toEqual([]);
  });

  it('a context window the engine does not honour, a nearly full disk, no traffic for 30 minutes: each its own code', () => {
    const now = 10_000_000;
    const v = verdictOf(
      inputs({
        checks: {
          contexts: [
            { model: 'a', announced: 4096, engine: 256, via: 'llama.cpp /props n_ctx' },
            { model: 'b', announced: 2048, engine: 4096, via: 'llama.cpp /props n_ctx' },
          ],
          disk: { path: '/home/me/.swan-provider', freeBytes: 512 * 1024 ** 2, totalBytes: 500 * 1024 ** 3 },
          traffic: { hubRequests: 0, connectedSince: now - 31 * 60_000, now },
        },
      }),
    );
    expect(codes(v)).toEqual(['context_not_honoured', 'disk_nearly_full', 'no_traffic']);
    expect(v.reasons[0]).toMatchObject({ models: ['a'], state: 'degraded' });
    expect(v.label).toBe('Degraded');
    // Traffic, room on the disk, a window within the engine's: nothing to say.
    const fine = verdictOf(
      inputs({
        checks: {
          contexts: [{ model: 'a', announced: 256, engine: 256, via: 'x' }],
          disk: { path: '/h', freeBytes: 100 * 1024 ** 3, totalBytes: 500 * 1024 ** 3 },
          traffic: { hubRequests: 0, connectedSince: now - 29 * 60_000, now },
        },
      }),
    );
    expect(fine.state).toBe('serving');
  });
});
