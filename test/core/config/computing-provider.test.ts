// Our loader reads a config.toml + models.json in the shape the Go computing-provider uses
// (fixture written from its documented format: test/fixtures/computing-provider/).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config/config';

const fixture = path.join(import.meta.dirname, '..', '..', 'fixtures', 'computing-provider');
let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('a computing-provider config.toml', () => {
  it('loads, with their sections and extra keys passed over and ServiceURL derived', () => {
    const c = loadConfig(path.join(fixture, 'config.toml'), {});
    expect(c.nodeName).toBe('rig-01');
    expect(c.enable).toBe(true);
    expect(c.webSocketUrl).toBe('wss://inference-ws.example.org');
    // As the Go NewInferenceClient derives it: the host's "-ws" goes.
    expect(c.serviceUrl).toBe('https://inference.example.org');
    expect(c.apiKey).toBe('sk-prov-fixture0000000000');
    expect(c.models).toEqual(['meta-llama/Llama-3.2-3B-Instruct']);
    // No [Agent] / [Gateway]: our defaults.
    expect(c.agent.heartbeatIntervalMs).toBe(30_000);
    expect(c.gateway.enable).toBe(false);
  });

  it('reads their models.json fields, keeping the ones we do not use', () => {
    const c = loadConfig(path.join(fixture, 'config.toml'), {});
    expect(c.modelEntries['meta-llama/Llama-3.2-3B-Instruct']).toMatchObject({
      endpoint: 'http://127.0.0.1:11434',
      local_model: 'llama3.2:3b',
      gpu_memory: 6000,
      category: 'text-generation',
      context_length: 8192,
    });
    expect(c.modelEntries['Qwen/Qwen2.5-7B-Instruct']).toMatchObject({
      endpoint: 'http://127.0.0.1:8000',
      api_key: 'sk-local-vllm',
      format: 'awq',
      quantization: 'w4a16',
      container: '',
    });
  });

  it('still refuses unknown keys in our own [Agent] section when added to their file', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cp-'));
    const text = fs.readFileSync(path.join(fixture, 'config.toml'), 'utf8') + '\n[Agent]\nHeartbeatIntervalSeconds = 5\nHeartbeat = 5\n';
    fs.writeFileSync(path.join(dir, 'config.toml'), text);
    const line = text.split('\n').indexOf('Heartbeat = 5') + 1;
    expect(() => loadConfig(path.join(dir!, 'config.toml'), {})).toThrow(
      expect.objectContaining({ code: 'unknown_setting', setting: 'Agent.Heartbeat', line }),
    );
  });
});
