// Changing where the provider key goes (hub URL, service URL) through settings.save needs the key
// again or a confirmation naming the new host; plain ws:// / http:// to a non-loopback host needs an
// explicit "insecure" confirmation. Through a real Agent (real dev hub): a refused save changes nothing
// and the key never reaches the other server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SaveResult, SettingsView } from '../../../src/shared/bridge';
import { checkKeyDestination } from '../../../src/core/agent/key-destination';
import { registered, startStack, TEST_KEY, type Stack } from '../../support/stack';

let stack: Stack;
let thief: http.Server;
let thiefPort: number;
const seen: string[] = [];
const invoke = <T>(channel: string, args: unknown): Promise<T> => stack.agent.invoke(channel, args) as Promise<T>;

beforeAll(async () => {
  stack = await startStack();
  await registered(stack);
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
  it('a new hub or service host without the key or a confirmation is refused and nothing changes', async () => {
    const before = await invoke<SettingsView>('settings.get', {});
    const hub = `ws://localhost:${thiefPort}`;
    const r = await invoke<SaveResult>('settings.save', { patch: { hubUrl: hub, serviceUrl: `http://localhost:${thiefPort}` } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.errors).sort()).toEqual(['hubUrl', 'serviceUrl']);
    expect(r.confirm).toEqual({ keyDestination: [`localhost:${thiefPort}`], insecure: [] });
    expect(await invoke<SettingsView>('settings.get', {})).toEqual(before);
    expect(stack.agent.hubStatus().connected).toBe(true);
    // A confirmation naming another host does not count.
    const wrong = await invoke<SaveResult>('settings.save', { patch: { hubUrl: hub, confirmKeyDestination: 'somewhere.else' } });
    expect(wrong.ok).toBe(false);
    expect(seen).toEqual([]);
  });

  it('the same change with the key typed again, or with the host confirmed, is accepted', async () => {
    const hub = stack.hub!.wsUrl.replace('127.0.0.1', 'localhost');
    const confirmed = await invoke<SaveResult>('settings.save', { patch: { hubUrl: hub, confirmKeyDestination: new URL(hub).host } });
    expect(confirmed).toEqual({ ok: true });
    const back = stack.hub!.wsUrl;
    expect(await invoke<SaveResult>('settings.save', { patch: { hubUrl: back, providerKey: TEST_KEY } })).toEqual({ ok: true });
    expect((await invoke<SettingsView>('settings.get', {})).hubUrl).toBe(back);
    // The confirmation fields are not settings: they are not kept.
    expect(JSON.stringify(await invoke<SettingsView>('settings.get', {}))).not.toContain('confirm');
    await registered(stack);
  });

  it('plain ws:// or http:// to a host that is not this machine needs the insecure confirmation, even with the key', () => {
    const current = { hubUrl: 'wss://inference-ws.swanchain.io', serviceUrl: 'https://inference.swanchain.io' };
    const plain = checkKeyDestination(current, { hubUrl: 'ws://192.168.1.9:8081', providerKey: 'sk-prov-xxxxxxxx' });
    expect(plain.confirm).toEqual({ keyDestination: [], insecure: ['192.168.1.9:8081'] });
    expect(Object.keys(plain.errors)).toEqual(['hubUrl']);
    const ok = checkKeyDestination(current, { hubUrl: 'ws://192.168.1.9:8081', providerKey: 'sk-prov-xxxxxxxx', confirmInsecure: true });
    expect(ok).toEqual({ errors: {} });
    // Loopback over plain ws:// is fine (a local hub); the destination still needs confirming.
    expect(checkKeyDestination(current, { hubUrl: 'ws://127.0.0.1:8081' }).confirm).toEqual({ keyDestination: ['127.0.0.1:8081'], insecure: [] });
    // Same host, another path: no new destination.
    expect(checkKeyDestination(current, { hubUrl: 'wss://inference-ws.swanchain.io/ws' })).toEqual({ errors: {} });
    // Both hosts can be confirmed at once.
    const two = { hubUrl: 'wss://a.example', serviceUrl: 'https://b.example' };
    expect(checkKeyDestination(current, { ...two, confirmKeyDestination: ['a.example', 'b.example'] })).toEqual({ errors: {} });
    expect(checkKeyDestination(current, { ...two, confirmKeyDestination: 'a.example' }).confirm?.keyDestination).toEqual(['b.example']);
  });
});
