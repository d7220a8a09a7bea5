// One state per endpoint: health's verdict on a watched endpoint overrides discovery's older look;
// discovery's state stands for endpoints health does not watch.
import { describe, expect, it } from 'vitest';
import { endpointStates, engineView } from '../../../src/core/engines/endpoint-state';
import type { EndpointHealth } from '../../../src/core/engine-client/health';
import type { EngineInfo } from '../../../src/shared/types';

const engine = (url: string, over: Partial<EngineInfo> = {}): EngineInfo => ({
  url,
  type: 'llamacpp',
  models: ['m'],
  reachable: true,
  lastSeen: 1000,
  origin: 'owner',
  ...over,
});
const checked = (url: string, over: Partial<EndpointHealth> = {}): EndpointHealth => ({
  url,
  health: 'healthy',
  consecutiveFailures: 0,
  lastCheckAt: 5000,
  ...over,
});

describe('engineView', () => {
  it("an engine discovery saw answering that health finds refusing is unreachable, with health's reason", () => {
    const [e] = engineView([engine('http://h:1')], [checked('http://h:1', { health: 'unhealthy', condition: 'down', lastError: 'refused the connection' })]);
    expect(e).toMatchObject({ reachable: false, error: 'refused the connection' });
  });

  it("an engine health finds healthy is reachable, seen at the check, discovery's error gone", () => {
    const [e] = engineView([engine('http://h:1', { reachable: false, error: 'nothing is listening' })], [checked('http://h:1')]);
    expect(e).toMatchObject({ reachable: true, lastSeen: 5000 });
    expect(e?.error).toBeUndefined();
  });

  it('loading, a refused key and a degraded engine: each says so', () => {
    const list = engineView(
      [engine('http://h:1'), engine('http://h:2'), engine('http://h:3')],
      [
        checked('http://h:1', { health: 'unhealthy', condition: 'loading', lastError: 'loading its model' }),
        checked('http://h:2', { health: 'unhealthy', condition: 'key_rejected', lastError: 'engine refuses our key' }),
        checked('http://h:3', { health: 'degraded', lastError: 'GET /v1/models answered 500' }),
      ],
    );
    expect(list.map((e) => [e.reachable, e.loading ?? false, e.error])).toEqual([
      [false, true, 'loading its model'],
      [true, false, 'engine refuses our key'],
      [true, false, 'GET /v1/models answered 500'],
    ]);
  });

  it("an endpoint health has not checked yet keeps discovery's view", () => {
    const e = engine('http://h:1', { reachable: false, error: 'x' });
    expect(engineView([e], [checked('http://h:1', { lastCheckAt: undefined })])).toEqual([e]);
  });
});

describe('endpointStates', () => {
  it("watched endpoints read health; unwatched ones behind an engine that does not answer read down with discovery's reason", () => {
    const states = endpointStates(
      ['http://h:1', 'http://h:2', 'http://h:3'],
      [checked('http://h:1', { health: 'degraded', lastError: 'slow' })],
      [engine('http://h:2', { reachable: false, error: 'nothing is listening at http://h:2' }), engine('http://h:3')],
    );
    expect(states).toEqual([
      { url: 'http://h:1', health: 'degraded', lastError: 'slow' },
      { url: 'http://h:2', health: 'unhealthy', condition: 'down', lastError: 'nothing is listening at http://h:2' },
    ]);
  });
});
