// Announced names, engine capacity readings, the per-endpoint limit, JSON error lines and the models.json watch.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { announcedName } from '../../../src/core/models/registry';
import { watchModelsJson } from '../../../src/core/models/watch';
import { jsonErrorOffset, lineAt } from '../../../src/core/config/json-position';
import { loadConfig } from '../../../src/core/config/config';
import { llamaCppSlots, promGauge, sglangSlots, vllmLoad } from '../../../src/core/engine-client/capacity';
import { endpointLimit, engineSlots } from '../../../src/core/scheduler/capacity';
import { memoryLog } from '../../../src/core/base/log';
import { tempHome, until } from '../../support/stack';

// The real llama-server's /props answer, copied into the repo (test/fixtures/llama.cpp/FROM.md).
const PROPS = path.resolve(__dirname, '..', '..', 'fixtures', 'llama.cpp', 'props.json');

describe('announced names', () => {
  it('a file path becomes its stem; aliases and Hugging Face ids stay', () => {
    expect(announcedName('/srv/models/tiny.gguf')).toBe('tiny');
    expect(announcedName('C:\\models\\Qwen2.5-7B-Instruct-Q4_K_M.gguf')).toBe('Qwen2.5-7B-Instruct-Q4_K_M');
    expect(announcedName('/m/big-00001-of-00003.gguf')).toBe('big');
    expect(announcedName('./models/x.bin')).toBe('x');
    expect(announcedName('tiny-alias')).toBe('tiny-alias');
    expect(announcedName('meta-llama/Llama-3.1-8B-Instruct')).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect(announcedName('llama3.2:3b')).toBe('llama3.2:3b');
  });
});

describe('engine capacity', () => {
  it('reads llama.cpp total_slots (the real /props capture) and SGLang max_running_requests', () => {
    const props = JSON.parse(fs.readFileSync(PROPS, 'utf8')) as Record<string, unknown>;
    expect(llamaCppSlots(props)).toEqual({ slots: 2, source: 'llama.cpp /props total_slots' });
    expect(llamaCppSlots({ total_slots: 0 })).toBeUndefined();
    expect(sglangSlots({ max_running_requests: 48, tp_size: 1 })).toEqual({ slots: 48, source: 'SGLang /get_server_args max_running_requests' });
    expect(sglangSlots({ max_running_requests: null })).toBeUndefined();
  });

  it('vLLM gauges: waiting requests make the running count the limit', () => {
    const text = [
      '# TYPE vllm:num_requests_running gauge',
      'vllm:num_requests_running{model_name="m"} 12.0',
      'vllm:num_requests_waiting{model_name="m"} 3.0',
      'vllm:num_requests_waiting_total 99',
    ].join('\n');
    expect(promGauge(text, 'vllm:num_requests_waiting')).toBe(3);
    const load = vllmLoad({ status: 200, body: text, contentType: 'text/plain' });
    expect(load).toEqual({ running: 12, waiting: 3 });
    expect(engineSlots(undefined, load)?.slots).toBe(12);
    expect(engineSlots(undefined, { running: 5, waiting: 0 })).toBeUndefined();
  });

  it('a number in config wins; "auto" takes the engine figure, else the default', () => {
    const cap = { slots: 2, source: 'llama.cpp /props total_slots' };
    expect(endpointLimit({ capacityAuto: false, maxConcurrentPerEndpoint: 7 }, cap)).toEqual({ max: 7, source: 'config MaxConcurrentPerEndpoint' });
    expect(endpointLimit({ capacityAuto: true, maxConcurrentPerEndpoint: 4 }, cap)).toEqual({ max: 2, source: 'llama.cpp /props total_slots' });
    expect(endpointLimit({ capacityAuto: true, maxConcurrentPerEndpoint: 4 })).toEqual({ max: 4, source: 'default (the engine does not say)' });
  });

  it('config: MaxConcurrentPerEndpoint is "auto" by default, a number or "auto" when given', () => {
    const home = tempHome();
    const file = path.join(home, 'config.toml');
    fs.writeFileSync(file, '[Agent]\n');
    expect(loadConfig(file, {}).agent.capacityAuto).toBe(true);
    fs.writeFileSync(file, '[Agent]\nMaxConcurrentPerEndpoint = 6\n');
    expect(loadConfig(file, {}).agent).toMatchObject({ capacityAuto: false, maxConcurrentPerEndpoint: 6 });
    fs.writeFileSync(file, '[Agent]\nMaxConcurrentPerEndpoint = "auto"\n');
    expect(loadConfig(file, {}).agent.capacityAuto).toBe(true);
    fs.writeFileSync(file, '[Agent]\nMaxConcurrentPerEndpoint = "lots"\n');
    expect(() => loadConfig(file, {})).toThrow(expect.objectContaining({ code: 'invalid_setting', setting: 'Agent.MaxConcurrentPerEndpoint', line: 2 }));
    fs.rmSync(home, { recursive: true, force: true });
  });
});

describe('JSON error lines', () => {
  it('points at the line where the JSON breaks', () => {
    const bad = '{\n  "a": {\n    "endpoint": \n}\n';
    expect(lineAt(bad, jsonErrorOffset(bad)!)).toBe(4);
    expect(jsonErrorOffset('{"a": 1}')).toBeUndefined();
    expect(lineAt('{"a": 1,\n"b": tru}', jsonErrorOffset('{"a": 1,\n"b": tru}')!)).toBe(2);
    expect(jsonErrorOffset('{"a": 1} x')).toBe(9);
  });
});

describe('models.json watch', () => {
  it('applies a good edit live and refuses a bad one with file:line, keeping the old map', async () => {
    const home = tempHome();
    const file = path.join(home, 'models.json');
    fs.writeFileSync(file, '{}');
    fs.writeFileSync(path.join(home, 'config.toml'), '');
    const config = loadConfig(path.join(home, 'config.toml'), {});
    const log = memoryLog();
    const lines: string[] = [];
    log.on('entry', (e: { msg: string }) => lines.push(e.msg));
    let changes = 0;
    const w = watchModelsJson(config, log.child('agent'), () => changes++);
    try {
      fs.writeFileSync(file, JSON.stringify({ m: { endpoint: 'http://127.0.0.1:8000/v1' } }));
      await until(() => changes === 1, 'the edit applied');
      expect(Object.keys(config.modelEntries)).toEqual(['m']);
      fs.writeFileSync(file, '{\n  "m": {\n    "endpoint": 5\n  }\n}\n');
      await until(() => lines.some((l) => l.startsWith('models.json change refused')), 'the bad edit refused');
      expect(lines.find((l) => l.startsWith('models.json change refused'))).toContain(`${file}:3`); // the field's line
      expect(changes).toBe(1);
      expect(config.modelEntries.m?.endpoint).toBe('http://127.0.0.1:8000/v1');
    } finally {
      w.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('a llama-server loading its model', () => {
  it('is found as a loading llama.cpp engine, not "not an inference engine"', async () => {
    const http = await import('node:http');
    const { detectEngine } = await import('../../../src/core/engine-client/detect');
    // The bytes of llama-server's captured loading-v1-models.json (every route answers them while loading).
    const body = '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}';
    const s = http.createServer((_q, res) =>
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }).end(body),
    );
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(s.address() as { port: number }).port}`;
      const info = await detectEngine(url, 1000, 'owner');
      expect(info).toMatchObject({ url, type: 'llamacpp', loading: true, reachable: false, models: [] });
      expect(info?.error).toMatch(/loading its model/);
    } finally {
      s.close();
    }
  });
});
