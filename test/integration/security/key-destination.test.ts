// Changing where the provider key goes (hub URL, service URL) through settings.save needs the owner: the
// key typed again in the same patch, or an approval given outside the console. No field of the request
// counts (the old confirmKeyDestination/confirmInsecure fields are refused outright). Through a real Agent
// and dev hub: a held change changes nothing and the key never reaches the other server until the owner
// approves, with `swan-provider approve` or the agent's own channel; approvals expire.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import { BridgeError, type OwnerConfirmation } from '../../../src/shared/bridge-error';
import { checkKeyDestination, keyAfterSave } from '../../../src/core/owner/key-destination';
import { call, registered, startStack, TEST_KEY, until, type Stack } from '../../support/stack';
import { runCli } from '../../support/cli/cli';

let stack: Stack;
let thief: http.Server;
let thiefPort: number;
const seen: string[] = [];
const events: BridgeEvent[] = [];

/** The refusal a held save throws: its code and the approval it carries. */
async function refused(p: Promise<unknown>): Promise<OwnerConfirmation> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(BridgeError);
  expect((e as BridgeError).code).toBe('OWNER_CONFIRMATION_REQUIRED');
  return (e as BridgeError).confirmation!;
}

beforeAll(async () => {
  stack = await startStack();
  await registered(stack);
  stack.agent.subscribe((e) => events.push(e));
  // Another server on this machine, standing in for the attacker's: it records any key it is sent.
  thief = http.createServer((req, res) => {
    seen.push(`${req.headers.authorization ?? ''}`);
    res.writeHead(404).end();
  });
  thief.on('upgrade', (req, socket) => {
    seen.push(`${req.headers.authorization ?? ''}`);
    socket.destroy();
  });
  await new Promise<void>((r) => thief.listen(0, '127.0.0.1', r));
  thiefPort = (thief.address() as AddressInfo).port;
});
afterAll(async () => {
  await stack?.close();
  await new Promise((r) => thief?.close(r));
});

describe('settings.save: where the key goes', () => {
  it('the fields a caller could once set to "confirm" are refused as unknown arguments', async () => {
    const patch = { hubUrl: `ws://localhost:${thiefPort}`, confirmKeyDestination: [`localhost:${thiefPort}`], confirmInsecure: true };
    await expect(stack.agent.invoke('settings.save', { patch })).rejects.toMatchObject({ code: 'invalid_args' });
    expect(seen).toEqual([]);
  });

  it('a new host with a key saved is held for the owner: nothing changes and the other server gets nothing', async () => {
    const before = await call(stack.agent, 'settings.get', {});
    const hub = `ws://localhost:${thiefPort}`;
    const c = await refused(call(stack.agent, 'settings.save', { patch: { hubUrl: hub, serviceUrl: `http://localhost:${thiefPort}` } }));
    expect(c).toMatchObject({ kind: 'key_destination', hosts: [`localhost:${thiefPort}`], insecure: [] });
    expect(c.approveCommand).toMatch(new RegExp(`^swan-provider approve ${c.code} --home `));
    expect(c.expiresAt).toBeGreaterThan(Date.now());
    expect(await call(stack.agent, 'settings.get', {})).toEqual(before);
    expect(stack.agent.hubStatus().connected).toBe(true);
    // Denied where the agent runs: still nothing, and the console hears how it ended.
    await stack.agent.approvals.decide(c.code, 'deny', 'test');
    await until(() => events.some((e) => e.type === 'approval' && e.approval.approvalId === c.approvalId), 'the approval event');
    expect(events.find((e) => e.type === 'approval')).toEqual({
      type: 'approval',
      approval: { approvalId: c.approvalId, kind: 'key_destination', status: 'denied' },
    });
    expect(await call(stack.agent, 'settings.get', {})).toEqual(before);
    expect(seen).toEqual([]);
  });

  it('approved with `swan-provider approve CODE`, the held change is applied and the link follows it', async () => {
    const moved = stack.hub!.wsUrl.replace('127.0.0.1', 'localhost');
    const c = await refused(call(stack.agent, 'settings.save', { patch: { hubUrl: moved } }));
    const r = await runCli(['approve', c.code, '--yes', '--home', stack.home]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Approved');
    expect((await call(stack.agent, 'settings.get', {})).hubUrl).toBe(moved);
    await until(() => stack.hub!.providers().some((p) => p.connected) && stack.agent.hubStatus().connected, 'registered at the new address');
    expect(events.some((e) => e.type === 'approval' && e.approval.approvalId === c.approvalId && e.approval.status === 'approved')).toBe(true);
  });

  it('`swan-provider approve` lists what waits, denies with --deny, and refuses a code that is not waiting', async () => {
    const c = await refused(call(stack.agent, 'settings.save', { patch: { hubUrl: `ws://localhost:${thiefPort}` } }));
    const list = await runCli(['approve', '--home', stack.home]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(c.code);
    expect(list.stdout).toContain(`localhost:${thiefPort}`);
    const wrong = await runCli(['approve', 'ZZZZ-ZZZZ', '--yes', '--home', stack.home]);
    expect(wrong.code).toBe(1);
    // Without a terminal and without --yes it asks for --yes rather than approving.
    const noTty = await runCli(['approve', c.code, '--home', stack.home]);
    expect(noTty.code).toBe(2);
    expect(stack.agent.approvals.pending().map((p) => p.code)).toEqual([c.code]);
    const deny = await runCli(['approve', c.code, '--deny', '--home', stack.home]);
    expect(deny.code).toBe(0);
    expect(deny.stdout).toContain('Denied');
    expect(stack.agent.approvals.pending()).toEqual([]);
    expect((await call(stack.agent, 'settings.get', {})).hubUrl).not.toContain(String(thiefPort));
    expect(seen).toEqual([]);
  });

  it('the key typed again in the same patch is the owner: saved at once, a plain address off this machine as a warning', async () => {
    const back = stack.hub!.wsUrl;
    expect(await call(stack.agent, 'settings.save', { patch: { hubUrl: back, providerKey: TEST_KEY } })).toEqual({ ok: true });
    expect((await call(stack.agent, 'settings.get', {})).hubUrl).toBe(back);
    await registered(stack);
    const lan = await call(stack.agent, 'settings.save', { patch: { serviceUrl: 'http://192.0.2.10:8080', providerKey: TEST_KEY } });
    expect(lan.ok).toBe(true);
    expect(lan.ok && Object.keys(lan.warnings ?? {})).toEqual(['serviceUrl']);
    await call(stack.agent, 'settings.save', { patch: { serviceUrl: stack.hub!.url, providerKey: TEST_KEY } });
  });

  it('an expired approval applies nothing', async () => {
    const c = await refused(call(stack.agent, 'settings.save', { patch: { hubUrl: `ws://localhost:${thiefPort}` } }));
    // Replaced by a newer request is one way to end; the agent's own timer is the other (approvals.test.ts).
    const c2 = await refused(call(stack.agent, 'settings.save', { patch: { hubUrl: `ws://localhost:${thiefPort}/x` } }));
    expect(await stack.agent.approvals.decide(c.code, 'approve', 'test')).toBeUndefined();
    await stack.agent.approvals.decide(c2.code, 'deny', 'test');
    expect((await call(stack.agent, 'settings.get', {})).hubUrl).toBe(stack.hub!.wsUrl);
    expect(seen).toEqual([]);
  });
});

describe('the rule', () => {
  const current = { hubUrl: 'wss://inference-ws.swanchain.io', serviceUrl: 'https://inference.swanchain.io' };
  const withKey = { keyAfter: 'sk-prov-saved', keyTyped: false };

  it('no key saved: a first run to any network saves at once (plain addresses off this machine warned about)', () => {
    for (const patch of [
      { hubUrl: 'wss://testnet.example/ws', serviceUrl: 'https://testnet.example' },
      { hubUrl: 'ws://192.168.1.9:8081', serviceUrl: 'http://192.168.1.9:8081' },
    ]) {
      const r = checkKeyDestination({ current, patch, keyAfter: '', keyTyped: false });
      expect(r.needsOwner).toBe(false);
    }
    expect(Object.keys(checkKeyDestination({ current, patch: { hubUrl: 'ws://192.168.1.9:8081' }, keyAfter: '', keyTyped: false }).warnings)).toEqual([
      'hubUrl',
    ]);
  });

  it('a key saved: a new host, or plain ws:// / http:// to another machine, needs the owner', () => {
    expect(checkKeyDestination({ current, patch: { hubUrl: 'ws://192.168.1.9:8081' }, ...withKey })).toMatchObject({
      hosts: ['192.168.1.9:8081'],
      insecure: ['192.168.1.9:8081'],
      needsOwner: true,
    });
    // Same host, another path: nothing new.
    expect(checkKeyDestination({ current, patch: { hubUrl: 'wss://inference-ws.swanchain.io/ws' }, ...withKey }).needsOwner).toBe(false);
    // The service host as the hub host: the key goes there already.
    expect(checkKeyDestination({ current, patch: { hubUrl: 'wss://inference.swanchain.io' }, ...withKey }).needsOwner).toBe(false);
    // A downgrade to plain ws:// on the same host is new: the key would cross the network readable.
    expect(checkKeyDestination({ current, patch: { hubUrl: 'ws://inference-ws.swanchain.io' }, ...withKey })).toMatchObject({
      hosts: [],
      insecure: ['inference-ws.swanchain.io'],
      needsOwner: true,
    });
    // Loopback over plain ws:// is fine; only the new host counts.
    expect(checkKeyDestination({ current, patch: { hubUrl: 'ws://127.0.0.1:8081' }, ...withKey })).toMatchObject({
      hosts: ['127.0.0.1:8081'],
      insecure: [],
      needsOwner: true,
    });
  });

  it('the typed key counts only when it is the key that will be sent', () => {
    expect(keyAfterSave({ env: '', stored: 'old', config: '' }, 'typed')).toEqual({ keyAfter: 'typed', keyTyped: true });
    // INFERENCE_API_KEY wins over a saved key: typing another does not prove anything about it.
    expect(keyAfterSave({ env: 'env-key', stored: '', config: '' }, 'typed')).toEqual({ keyAfter: 'env-key', keyTyped: false });
    expect(keyAfterSave({ env: 'env-key', stored: '', config: '' }, 'env-key')).toEqual({ keyAfter: 'env-key', keyTyped: true });
    // Clearing the saved key leaves config.toml's ApiKey to be sent.
    expect(keyAfterSave({ env: '', stored: 'old', config: 'cfg' }, '')).toEqual({ keyAfter: 'cfg', keyTyped: false });
    expect(keyAfterSave({ env: '', stored: 'old', config: '' }, '')).toEqual({ keyAfter: '', keyTyped: false });
  });
});
