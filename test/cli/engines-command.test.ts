// `swan-provider engines` against real test engines on port 0.
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { enginesCommand } from '../../src/cli/engines-command';
import { startTestEngine, type TestEngine } from '../support/engine-server';

let engines: TestEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let buf = '';
  stream.on('data', (c: Buffer) => (buf += c.toString('utf8')));
  return { stream, text: () => buf };
}

describe('enginesCommand', () => {
  it('prints a table of what discovery finds', async () => {
    const v = await startTestEngine({ engineType: 'vllm' });
    const o = await startTestEngine({ engineType: 'ollama' });
    engines.push(v, o);
    const out = capture();
    const code = await enginesCommand({ json: false, hosts: [o.url], probeUrls: [v.url], stdout: out.stream });
    expect(code).toBe(0);
    const lines = out.text().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^URL\s+TYPE\s+VERSION\s+MODELS$/);
    expect(lines).toHaveLength(3);
    expect(lines.find((l) => l.startsWith(v.url))).toMatch(/^\S+\s+vllm\s+0\.11\.0\s+Qwen2\.5-1\.5B-Instruct$/);
    expect(lines.find((l) => l.startsWith(o.url))).toMatch(/^\S+\s+ollama\s+0\.12\.6\s+gemma3:4b$/);
  });

  it('prints JSON, and says what to do when nothing is found', async () => {
    const v = await startTestEngine({ engineType: 'tgi' });
    engines.push(v);
    const out = capture();
    expect(await enginesCommand({ json: true, hosts: [], probeUrls: [v.url], stdout: out.stream })).toBe(0);
    expect(JSON.parse(out.text())).toMatchObject([
      { url: v.url, type: 'tgi', version: '3.1.2-dev0', models: ['meta-llama/Llama-3.1-8B-Instruct'], reachable: true },
    ]);

    await v.setMode('down');
    const none = capture();
    const hint = capture();
    expect(await enginesCommand({ json: false, hosts: [], probeUrls: [v.url], stdout: none.stream, stderr: hint.stream })).toBe(0);
    expect(none.text()).toBe('');
    expect(hint.text()).toContain(`No inference engine found on 127.0.0.1 (ports ${v.port})`);
    expect(hint.text()).toContain('--host HOST:PORT');
  });

  it('--json with nothing found prints [] on stdout, exits 0, and keeps the hint on stderr', async () => {
    const v = await startTestEngine({ engineType: 'vllm' });
    engines.push(v);
    await v.setMode('down');
    const out = capture();
    const hint = capture();
    expect(await enginesCommand({ json: true, hosts: [], probeUrls: [v.url], stdout: out.stream, stderr: hint.stream })).toBe(0);
    expect(JSON.parse(out.text())).toEqual([]);
    expect(hint.text()).toContain('No inference engine found');
  });
});
