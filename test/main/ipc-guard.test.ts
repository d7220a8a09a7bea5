// The desktop IPC guard: sender check, channel and argument validation, size caps, error replies.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryLog } from '../../src/core/base/log';
import { StandInBackend } from '../support/bridge-backend';
import { BridgeError } from '../../src/shared/bridge-error';
import {
  MAX_ARGS_BYTES,
  checkSender,
  errorText,
  guardedInvoke,
  isAppUrl,
  toReply,
  validateCall,
  type RendererLocation,
  type SenderInfo,
} from '../../src/main/ipc-guard';

const indexFile = path.resolve('/opt/Swan Provider Console/resources/app.asar/out/renderer/index.html');
const fileApp: RendererLocation = { kind: 'file', indexFile };
const devApp: RendererLocation = { kind: 'dev', url: 'http://localhost:5173/' };
const appUrl = pathToFileURL(indexFile).href;

const sender = (over: Partial<SenderInfo> = {}): SenderInfo => ({ webContentsId: 7, frameUrl: appUrl, isMainFrame: true, ...over });
const expected = { webContentsId: 7, renderer: fileApp };

describe('isAppUrl', () => {
  it('accepts the exact built index.html, with or without a hash route or query', () => {
    expect(isAppUrl(appUrl, fileApp)).toBe(true);
    expect(isAppUrl(`${appUrl}#/requests`, fileApp)).toBe(true);
    expect(isAppUrl(`${appUrl}?x=1`, fileApp)).toBe(true);
  });

  it('refuses other files, other schemes and garbage', () => {
    const other = pathToFileURL(path.join(path.dirname(indexFile), 'evil.html')).href;
    expect(isAppUrl(other, fileApp)).toBe(false);
    expect(isAppUrl(pathToFileURL('/tmp/index.html').href, fileApp)).toBe(false);
    expect(isAppUrl('file://remote-host' + pathToFileURL(indexFile).pathname, fileApp)).toBe(false);
    expect(isAppUrl('https://example.com/index.html', fileApp)).toBe(false);
    expect(isAppUrl('about:blank', fileApp)).toBe(false);
    expect(isAppUrl('data:text/html,<p>hi</p>', fileApp)).toBe(false);
    expect(isAppUrl('not a url', fileApp)).toBe(false);
    expect(isAppUrl('', fileApp)).toBe(false);
    expect(isAppUrl(null, fileApp)).toBe(false);
  });

  it('accepts the dev server origin only', () => {
    expect(isAppUrl('http://localhost:5173/', devApp)).toBe(true);
    expect(isAppUrl('http://localhost:5173/#/logs', devApp)).toBe(true);
    expect(isAppUrl('http://localhost:5174/', devApp)).toBe(false);
    expect(isAppUrl('http://127.0.0.1:5173/', devApp)).toBe(false);
    expect(isAppUrl('https://localhost:5173/', devApp)).toBe(false);
    expect(isAppUrl(appUrl, devApp)).toBe(false);
  });
});

describe('checkSender', () => {
  it('allows the main frame of our window on our page', () => {
    expect(checkSender(sender(), expected)).toEqual({ ok: true });
  });

  it('denies another web contents, a sub-frame, a navigated or destroyed frame, and a missing window', () => {
    const other = checkSender(sender({ webContentsId: 8 }), expected);
    expect(other).toMatchObject({ ok: false, code: 'other_contents' });
    const sub = checkSender(sender({ isMainFrame: false }), expected);
    expect(sub).toMatchObject({ ok: false, code: 'sub_frame' });
    const away = checkSender(sender({ frameUrl: 'https://evil.example/' }), expected);
    expect(away).toMatchObject({ ok: false, code: 'not_app_page' });
    // The log line quotes the page that tried.
    expect(!away.ok && away.reason).toContain('"https://evil.example/"');
    expect(checkSender(sender({ frameUrl: null }), expected)).toMatchObject({ ok: false, code: 'not_app_page' });
    expect(checkSender(sender(), { webContentsId: undefined, renderer: fileApp })).toMatchObject({ ok: false, code: 'other_contents' });
  });
});

describe('validateCall', () => {
  it('passes a known channel with valid arguments, parsed', () => {
    expect(validateCall('models.setEnabled', { model: 'qwen', enabled: true })).toEqual({
      ok: true,
      channel: 'models.setEnabled',
      args: { model: 'qwen', enabled: true },
    });
    // No arguments at all means an empty object.
    expect(validateCall('snapshot.get', undefined)).toEqual({ ok: true, channel: 'snapshot.get', args: {} });
  });

  it('refuses unknown channels, including prototype names, and bounds the echoed name', () => {
    for (const bad of ['fs.readFile', 'toString', '__proto__', 'constructor', 42, null, undefined, {}]) {
      const r = validateCall(bad, {});
      expect(r).toMatchObject({ ok: false, code: 'unknown_channel' });
    }
    const long = validateCall('x'.repeat(10_000), {});
    expect(!long.ok && long.error.length).toBeLessThan(200);
  });

  it('refuses wrong, missing and extra arguments with the field named', () => {
    const wrongType = validateCall('models.setEnabled', { model: 'qwen', enabled: 'yes' });
    expect(wrongType).toMatchObject({ ok: false, code: 'invalid_args' });
    expect(!wrongType.ok && wrongType.error).toMatch(/^Invalid arguments for models\.setEnabled: enabled:/);
    const missing = validateCall('models.warmup', {});
    expect(missing).toMatchObject({ ok: false, code: 'invalid_args' });
    expect(!missing.ok && missing.error).toMatch(/model:/);
    const extra = validateCall('serving.resume', { force: true });
    expect(extra).toMatchObject({ ok: false, code: 'invalid_args' });
    const notObject = validateCall('gpu.history', 'minutes=5');
    expect(notObject).toMatchObject({ ok: false, code: 'invalid_args' });
    const outOfRange = validateCall('gpu.history', { minutes: 61 });
    expect(outOfRange).toMatchObject({ ok: false, code: 'invalid_args' });
    expect(!outOfRange.ok && outOfRange.error).toMatch(/minutes/);
    const badPatch = validateCall('settings.save', { patch: { nodeName: 'rig', sshCommand: 'rm -rf /' } });
    expect(badPatch).toMatchObject({ ok: false, code: 'invalid_args' });
  });

  it('refuses oversized arguments before parsing them', () => {
    const big = validateCall('settings.checkKey', { key: 'k'.repeat(MAX_ARGS_BYTES + 1) });
    expect(big).toMatchObject({ ok: false, code: 'invalid_args' });
    // Refused on size, before the schema: the message gives the size and the cap.
    expect(!big.ok && big.error).toMatch(/bytes is more than the 65536 allowed/);
    // Just under the cap, the schema's own limit (512 chars) still applies.
    const underCap = validateCall('settings.checkKey', { key: 'k'.repeat(1000) });
    expect(!underCap.ok && underCap.error).toMatch(/key:/);
  });

  it('refuses arguments that are not plain data', () => {
    const cyclic: Record<string, unknown> = { model: 'a' };
    cyclic.self = cyclic;
    const r = validateCall('models.warmup', cyclic);
    expect(r).toMatchObject({ ok: false, code: 'invalid_args', error: expect.stringContaining('plain data') });
    expect(validateCall('gpu.history', { minutes: 10n }).ok).toBe(false);
  });
});

describe('replies', () => {
  it('wraps values and turns throws into text', async () => {
    expect(await toReply(() => 5)).toEqual({ ok: true, value: 5 });
    expect(await toReply(async () => Promise.reject(new Error('hub unreachable: check your network')))).toEqual({
      ok: false,
      code: 'failed',
      error: 'hub unreachable: check your network',
    });
    // A bridge code thrown by the backend travels in the reply.
    expect(
      await toReply(() => {
        throw new BridgeError('not_found', 'No model "m" is known here.');
      }),
    ).toEqual({ ok: false, code: 'not_found', error: 'No model "m" is known here.' });
    // An approval the owner must give travels with its refusal, so the window can say where to approve it.
    const confirmation = {
      approvalId: 'a'.repeat(24),
      code: 'ABCD-EFGH',
      kind: 'key_destination' as const,
      summary: 's',
      hosts: ['h:1'],
      insecure: [],
      approveCommand: 'swan-provider approve ABCD-EFGH',
      expiresAt: 1,
    };
    expect(
      await toReply(() => {
        throw new BridgeError('OWNER_CONFIRMATION_REQUIRED', 'Only you can allow this.', undefined, confirmation);
      }),
    ).toEqual({ ok: false, code: 'OWNER_CONFIRMATION_REQUIRED', error: 'Only you can allow this.', confirmation });
    expect(
      await toReply(() => {
        throw 'plain string';
      }),
    ).toEqual({ ok: false, code: 'failed', error: 'plain string' });
    const odd = await toReply(() => {
      throw { code: 1 };
    });
    expect(odd).toMatchObject({ ok: false, code: 'failed' });
    // Even an error with no text tells the owner where to look.
    expect(!odd.ok && odd.error).toMatch(/see the log/);
    expect(errorText(new Error('x'.repeat(5000))).length).toBeLessThanOrEqual(2001);
  });
});

describe('guardedInvoke', () => {
  it('calls the backend with validated arguments and returns its value', async () => {
    const backend = new StandInBackend({ 'serving.pause': (a) => ({ paused: true, cause: 'manual', reason: a.reason }) });
    const log = memoryLog();
    const reply = await guardedInvoke({ backend, log: log.child('ipc'), expected }, sender(), 'serving.pause', { reason: 'gaming' });
    expect(reply).toEqual({ ok: true, value: { paused: true, cause: 'manual', reason: 'gaming' } });
    expect(backend.calls).toEqual([{ channel: 'serving.pause', args: { reason: 'gaming' } }]);
  });

  it('drops calls from unknown senders without reaching the backend, and logs them', async () => {
    const backend = new StandInBackend();
    const log = memoryLog();
    const reply = await guardedInvoke({ backend, log: log.child('ipc'), expected }, sender({ frameUrl: 'https://evil.example/' }), 'snapshot.get', {});
    expect(reply).toEqual({ ok: false, code: 'refused', error: 'Refused: this page is not allowed to talk to the agent.' });
    expect(backend.calls).toHaveLength(0);
    expect(log.entries(10, 'warn').map((e) => e.msg)).toEqual([expect.stringContaining('Dropped an IPC call to "snapshot.get"')]);
  });

  it('answers bad channels and bad arguments with text, never calling the backend', async () => {
    const backend = new StandInBackend();
    const log = memoryLog();
    const ctx = { backend, log: log.child('ipc'), expected };
    const badChannel = await guardedInvoke(ctx, sender(), 'shell.exec', { cmd: 'ls' });
    expect(badChannel).toMatchObject({ ok: false, code: 'unknown_channel' });
    const badArgs = await guardedInvoke(ctx, sender(), 'models.setLimits', { model: 'm', maxConcurrent: 0, maxQueue: 1 });
    expect(badArgs).toMatchObject({ ok: false, code: 'invalid_args' });
    expect(!badArgs.ok && badArgs.error).toMatch(/maxConcurrent/);
    expect(backend.calls).toHaveLength(0);
    expect(log.entries(10, 'warn')).toHaveLength(2);
  });

  it('turns a backend error into { ok: false, error }', async () => {
    const backend = new StandInBackend({
      'settings.checkKey': () => {
        throw new Error('The hub says this key is not valid. Copy the key again from your Swan dashboard.');
      },
    });
    const reply = await guardedInvoke({ backend, log: memoryLog().child('ipc'), expected }, sender(), 'settings.checkKey', { key: 'sk-bad' });
    expect(reply).toEqual({ ok: false, code: 'failed', error: 'The hub says this key is not valid. Copy the key again from your Swan dashboard.' });
  });
});
