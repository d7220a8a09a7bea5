// "Serve my model as…" in Chromium against the real agent and the real llama-server: an engine added by
// address serves the shared tiny.gguf under its own name ("tiny", which the network does not route); the
// Network catalogue card offers the catalogue's ids, refuses one it does not list, and writes the models.json
// line for one it does, saying where. That mapping is checked like any other: the engine reports 147,392
// parameters, not 8 B, so the model is held back with mapping_parameters_mismatch until the owner presses
// "Announce anyway" for that finding; then the hub has it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect, go, slug, test } from './support/fixtures';
import { repoRoot } from './support/stack';

const SHARED = path.resolve(repoRoot, '..', 'shared', 'engines', 'llama.cpp');
// Resolved: start.sh starts the server on its real path, and the engine names the model by it.
const LLAMA = fs.existsSync(SHARED) ? fs.realpathSync(SHARED) : SHARED;
const LLAMA_PRESENT = fs.existsSync(path.join(LLAMA, 'start.sh')) && fs.existsSync(path.join(LLAMA, 'bin', 'llama-server'));
const TINY = path.join(LLAMA, 'models', 'tiny.gguf');

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

const ID = 'meta-llama/Llama-3.1-8B-Instruct';

test.skip(!LLAMA_PRESENT, 'skipped: ../shared/engines/llama.cpp is absent (the engine here is the real llama-server)');

test("a catalogue id picked for an engine's own model: models.json written, the contradiction held back, then announced on the owner's word", async ({
  app,
  stack,
}) => {
  const port = await freePort();
  const llama = { url: `http://127.0.0.1:${port}`, proc: spawn(path.join(LLAMA, 'start.sh'), ['--port', String(port), '-np', '1'], { stdio: 'ignore' }) };
  await expect.poll(async () => (await fetch(`${llama.url}/health`).catch(() => undefined))?.status, { timeout: 20_000 }).toBe(200);
  try {
    await go(app, 'engines');
    await app.getByTestId('endpoint-url').fill(`${llama.url}/v1`);
    await app.getByTestId('endpoint-add').click();
    await expect(app.getByTestId('endpoint-result')).toContainText(`Added ${llama.url}:`);
    // Named as it is announced (the file's name), the file beside it: never the path.
    const own = slug('tiny');
    const row = app.getByTestId(`catalogue-row-${own}`);
    await expect(row).toContainText('the network will not route requests for this name');

    // An id the catalogue does not list is refused where it was typed.
    await app.getByTestId(`serve-as-input-${own}`).fill('someone/not-a-network-model');
    await app.getByTestId(`serve-as-save-${own}`).click();
    await expect(app.getByTestId(`serve-as-error-${own}`)).toContainText("is not in the network's catalogue");

    await app.getByTestId(`serve-as-input-${own}`).fill(ID);
    await app.getByTestId(`serve-as-save-${own}`).click();
    // Said where: the file the agent reads, now holding the line.
    const done = app.getByTestId('serve-as-done');
    await expect(done).toContainText('models.json now announces');
    const modelsJson = (await done.textContent())!.split(' now announces')[0]!;
    expect(path.isAbsolute(modelsJson)).toBe(true);
    expect(JSON.parse(fs.readFileSync(modelsJson, 'utf8'))[ID]).toMatchObject({ local_model: TINY });

    // Checked against the engine's report: held back, with the code, and not at the hub.
    const finding = app.getByTestId(`mapping-finding-${slug(ID)}`);
    await expect(finding).toHaveAttribute('data-code', 'mapping_parameters_mismatch');
    await expect(finding).toHaveAttribute('data-confirmed', 'false');
    expect((await stack.provider())?.models).not.toContain(ID);

    await app.getByTestId(`mapping-confirm-${slug(ID)}`).click();
    await expect(finding).toHaveAttribute('data-confirmed', 'true');
    await expect.poll(async () => (await stack.provider())?.models).toContain(ID);
  } finally {
    llama.proc.kill('SIGKILL');
  }
});
