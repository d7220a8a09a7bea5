// Seed 002's browser example in real Chromium, from a page at an allowed origin; and the same page from
// an origin the owner did not allow, which must not reach the engine. Also fetch() with CORS.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generatedText } from '../../support/traces';
import { MODEL, startRig, type Rig } from '../../support/gateway/rig';
import { BROWSER_EXAMPLE, withUrl } from '../../support/gateway/seed-002-examples';

let browser: Browser;
let pages: http.Server;
let pagePort = 0;
let rig: Rig | undefined;
let page: Page | undefined;
/** The script the page runs (set per test). */
let script = '';

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless'] });
  pages = http.createServer((_req, res) => {
    // The example writes with process.stdout.write (as in Node); the page provides that one function.
    const html = `<!doctype html><meta charset="utf-8"><title>seed 002</title>
<script>window.__stdout = ''; window.process = { stdout: { write: (s) => { window.__stdout += s; } } };</script>
<script>${script}</script>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagePort = (pages.address() as AddressInfo).port;
}, 30_000);

afterEach(async () => {
  await page?.close();
  page = undefined;
  await rig?.close();
  rig = undefined;
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (pages ? pages.close(() => resolve()) : resolve()));
});

/** Opens the page at `origin` and resolves with its console lines once the example logs "Disconnected". */
async function runPage(origin: string): Promise<{ logs: string[]; stdout: string }> {
  page = await browser.newPage();
  const logs: string[] = [];
  const disconnected = new Promise<void>((resolve) =>
    page?.on('console', (m) => {
      logs.push(m.text());
      if (m.text() === 'Disconnected') resolve();
    }),
  );
  await page.goto(`${origin}/`);
  await disconnected;
  return { logs, stdout: (await page.evaluate('window.__stdout')) as string };
}

describe('seed 002 browser example in Chromium', () => {
  it('works unchanged from an allowed origin', async () => {
    rig = await startRig({ engine: { mode: { generate: 12 } }, gateway: { allowedOrigins: [`http://127.0.0.1:${pagePort}`] } });
    script = withUrl(BROWSER_EXAMPLE, rig.ws(`/v1/ws?apiKey=${rig.key}`));
    const { logs, stdout } = await runPage(`http://127.0.0.1:${pagePort}`);
    expect(stdout).toBe(generatedText(12));
    expect(logs).toEqual(['Connected', '\nComplete!', 'Disconnected']);
    expect(rig.engine.requests).toHaveLength(1);
  });

  it('a page from an origin the owner did not allow cannot use the GPU', async () => {
    rig = await startRig({ engine: { mode: { generate: 12 } }, gateway: { allowedOrigins: [`http://127.0.0.1:${pagePort}`] } });
    script = withUrl(BROWSER_EXAMPLE, rig.ws(`/v1/ws?apiKey=${rig.key}`));
    // Same page, other origin: localhost instead of 127.0.0.1.
    const { logs, stdout } = await runPage(`http://localhost:${pagePort}`);
    expect(logs).not.toContain('Connected');
    expect(logs.some((l) => l.startsWith('WebSocket error'))).toBe(true);
    expect(stdout).toBe('');
    expect(rig.engine.requests).toHaveLength(0);
    expect(rig.log.entries().some((e) => e.msg.includes(`Origin http://localhost:${pagePort} is not allowed`))).toBe(true);
  });

  it('fetch() with a key works from an allowed origin (CORS) and is refused from another', async () => {
    rig = await startRig({ engine: { mode: { generate: 4 } }, gateway: { allowedOrigins: [`http://127.0.0.1:${pagePort}`] } });
    script = '';
    const call = `fetch(${JSON.stringify(`${rig.gateway.url}/v1/chat/completions`)}, { method: 'POST', headers: { authorization: 'Bearer ${rig.key}', 'content-type': 'application/json' }, body: JSON.stringify({ model: ${JSON.stringify(MODEL)}, messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => r.json()).then((j) => j.choices[0].message.content, (e) => 'failed: ' + e.message)`;
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${pagePort}/`);
    expect(await page.evaluate(call)).toBe(generatedText(4));
    await page.goto(`http://localhost:${pagePort}/`);
    expect(await page.evaluate(call)).toMatch(/^failed: /);
    expect(rig.engine.requests).toHaveLength(1);
  });
});
