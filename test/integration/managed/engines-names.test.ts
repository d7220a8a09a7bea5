// `engines --json` and the table name a model by what it is announced as, the file beside it: the real
// llama-server started without --alias reports its -m path, which is never shown as the model's name.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesCommand } from '../../../src/cli/engines-command';
import { Llama, LLAMA_PRESENT, TINY } from '../../support/live/llama';
import { freePort } from '../../support/stack';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';

async function run(url: string, json: boolean): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  await enginesCommand({ json, hosts: [url], probeUrls: [], stdout: out, stderr: new PassThrough() });
  return text;
}

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'engines: names, not file paths' : `engines names — ${SKIP}`, () => {
  let llama: Llama;
  beforeAll(async () => {
    llama = new Llama(await freePort(), ['-np', '1']);
    await llama.start();
  }, 30_000);
  afterAll(async () => {
    await llama?.kill();
  });

  it('--json: served = [{name: "tiny", file: <the path>}]; the table: "tiny (file …)"', async () => {
    const [engine] = JSON.parse(await run(llama.url, true)) as Array<{ models: string[]; served: Array<{ name: string; file?: string }> }>;
    expect(engine?.models).toEqual([TINY]);
    expect(engine?.served).toEqual([{ name: 'tiny', file: TINY }]);
    expect(await run(llama.url, false)).toContain(`tiny (file ${TINY})`);
  }, 30_000);
});
