// `init` names models as the console does: a catalogue id when the engine's model certainly is one, else
// the engine's own name (a file path by its stem), the engine's name kept in local_model; a file path
// never becomes a key the hub would see.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initCommand, modelsFromEngines } from '../../src/cli/init';
import { announcedName } from '../../src/core/models/registry';
import type { EngineInfo } from '../../src/shared/types';
import { startTestEngine, type TestEngine } from '../support/engine-server';
import { tempHome } from '../support/stack';

const engines: TestEngine[] = [];
const homes: string[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

const engine = (url: string, models: string[], over: Partial<EngineInfo> = {}): EngineInfo => ({
  url,
  type: 'llamacpp',
  models,
  reachable: true,
  origin: 'owner',
  ...over,
});
const CATALOGUE = [{ id: 'meta-llama/Llama-3.1-8B-Instruct' }, { id: 'Qwen/Qwen2.5-7B-Instruct' }];

describe('init names models as the console does', () => {
  it('a GGUF path becomes its stem with the path in local_model; a catalogue model its catalogue id; a likeness of names nothing', () => {
    const { models, notes } = modelsFromEngines(
      [
        engine('http://127.0.0.1:8080', ['/srv/models/small.gguf'], {
          modelMeta: { '/srv/models/small.gguf': { parameters: 22_000_000, quantization: 'F16' } },
        }),
        engine('http://127.0.0.1:11434', ['qwen2.5:7b', 'my-qwen:latest'], {
          type: 'ollama',
          modelMeta: { 'my-qwen:latest': { family: 'qwen2', parameters: 7.6e9 } },
        }),
        engine('http://127.0.0.1:8000', ['meta-llama/Llama-3.1-8B-Instruct'], { type: 'vllm' }),
      ],
      CATALOGUE,
    );
    expect(models).toEqual({
      small: { endpoint: 'http://127.0.0.1:8080', local_model: '/srv/models/small.gguf' },
      'Qwen/Qwen2.5-7B-Instruct': { endpoint: 'http://127.0.0.1:11434', local_model: 'qwen2.5:7b' },
      'my-qwen:latest': { endpoint: 'http://127.0.0.1:11434' },
      'meta-llama/Llama-3.1-8B-Instruct': { endpoint: 'http://127.0.0.1:8000' },
    });
    expect(Object.keys(models).some((k) => k.includes('/srv/'))).toBe(false);
    // Each key is the name the console announces for an engine model not in models.json, or a catalogue id.
    expect(announcedName('/srv/models/small.gguf')).toBe('small');
    expect(notes.join('\n')).toContain("small (/srv/models/small.gguf): not in the network's catalogue");
    expect(notes.join('\n')).toContain("my-qwen:latest: not in the network's catalogue; it may be Qwen/Qwen2.5-7B-Instruct");
  });

  it('swan-provider init against a llama.cpp engine that reports its file path writes the stem, never the path', async () => {
    const e = await startTestEngine({ engineType: 'llamacpp', models: ['/srv/models/tiny.gguf'] });
    engines.push(e);
    const home = tempHome();
    homes.push(home);
    // The local dev hub's address: its catalogue is not read (nothing listens on a fresh port here).
    const code = await initCommand({ home, network: 'local', host: [e.url], probeUrls: [] });
    expect(code).toBe(0);
    const written = JSON.parse(fs.readFileSync(path.join(home, 'models.json'), 'utf8')) as Record<string, { endpoint: string; local_model?: string }>;
    expect(written).toEqual({ tiny: { endpoint: e.url, local_model: '/srv/models/tiny.gguf' } });
  });
});
