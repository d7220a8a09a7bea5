// Hub notices end to end with the real agent: POST /dev/notice on the dev hub sends a `notice` frame
// over the WebSocket; the agent validates it, logs it, tells the console through the bridge, keeps it
// in the home folder (a restarted agent still lists it) and never answers. A bad notice is dropped with
// its reason and the link stays up.
import { Agent } from '../../../src/core/agent';
import { memoryLog } from '../../../src/core/base/log';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import type { HubNoticeView } from '../../../src/shared/views/snapshot';
import { logEntries, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
let extra: Agent | undefined;
afterEach(async () => {
  await extra?.stop();
  extra = undefined;
  await stack?.close();
  stack = undefined;
});

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('hub notices', () => {
  it('reach the console through the bridge, are never answered, and survive a restart', async () => {
    stack = await startStack();
    await registered(stack);
    const events: BridgeEvent[] = [];
    const off = stack.agent.subscribe((e) => events.push(e));
    const sentBefore = stack.hub!.received.length;
    const res = await post(`${stack.hub!.url}/dev/notice`, {
      event: 'traffic_withheld',
      severity: 'warning',
      model_id: 'Qwen/Qwen2.5-7B-Instruct',
      message: 'Traffic is withheld while your reputation recovers.',
      details: { reputation: '0.41' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sent: 1 });
    await until(() => events.some((e) => e.type === 'notice'), 'notice event on the bridge');
    off();
    const ev = events.find((e): e is Extract<BridgeEvent, { type: 'notice' }> => e.type === 'notice')!;
    expect(ev.notice).toMatchObject({ event: 'traffic_withheld', severity: 'warning', modelId: 'Qwen/Qwen2.5-7B-Instruct', details: { reputation: '0.41' } });
    const listed = (await stack.agent.invoke('notices.list', {})) as HubNoticeView[];
    expect(listed.map((n) => n.id)).toEqual([ev.notice.id]);
    expect((await logEntries(stack.agent, 50, 'warn')).some((e) => /hub notice traffic_withheld/.test(e.msg))).toBe(true);
    // Never answered: no frame from the agent names the notice (no error, no ack).
    const replies = stack.hub!.received.slice(sentBefore).filter((m) => m.type === 'error' || m.type === 'ack');
    expect(replies).toEqual([]);

    // A second agent on the same home folder (a restart) lists it.
    await stack.agent.stop();
    extra = await Agent.create({
      home: stack.home,
      configPath: path.join(stack.home, 'config.toml'),
      log: memoryLog(),
      gpu: false,
      discovery: false,
      env: { PATH: process.env.PATH },
    });
    expect(((await extra.invoke('notices.list', {})) as HubNoticeView[]).map((n) => n.event)).toEqual(['traffic_withheld']);
  });

  it('raise an alert with no console open, and the bridge has no listener for it', async () => {
    stack = await startStack();
    await registered(stack);
    // Nobody subscribes to the bridge: the alerts' notice source listens to the NoticeBook itself.
    expect(stack.agent.listenerCount('bridge')).toBe(0);
    expect((await post(`${stack.hub!.url}/dev/notice`, { event: 'maintenance', severity: 'warning', message: 'Hub restarts at 02:00.' })).status).toBe(200);
    await until(() => stack!.agent.alerts.list().some((a) => a.kind === 'hub_notice'), 'hub_notice alert');
    expect(stack.agent.alerts.list().find((a) => a.kind === 'hub_notice')!.text).toBe('Hub restarts at 02:00.');
    expect(stack.agent.listenerCount('bridge')).toBe(0);
  });

  it('drops a bad notice with its reason and keeps the link up', async () => {
    stack = await startStack();
    await registered(stack);
    const hub = stack.hub!;
    const dialsBefore = stack.agent.hubStatus().counters.dials;
    for (const bad of [{ event: 'bad event\r\nBcc: x', message: 'm' }, { event: 'ok_name', message: 'x'.repeat(10_000) }, { event: 'ok_name' }]) {
      expect((await post(`${hub.url}/dev/notice`, bad)).status).toBe(200);
    }
    hub.broadcastRaw(JSON.stringify({ type: 'notice', payload: 'not an object' }));
    // Each drop is logged once, with its reason code (what the console's Logs page shows).
    const drops = async (): Promise<string[]> =>
      (await logEntries(stack!.agent, 100, 'warn')).map((e) => e.msg).filter((m) => m.startsWith('dropped a hub notice'));
    await until(async () => (await drops()).length === 4, 'four notices dropped');
    const warns = (await drops()).join('\n');
    for (const code of ['bad_event', 'oversized', 'no_message', 'not_an_object']) expect(warns).toContain(`(${code})`);
    expect(await stack.agent.invoke('notices.list', {})).toEqual([]);
    expect(hub.received.filter((m) => m.type === 'error')).toEqual([]);
    expect(stack.agent.hubStatus().connected).toBe(true);
    expect(stack.agent.hubStatus().counters.dials).toBe(dialsBefore);
    // And a good one after them still arrives, and one whose model_id carries a control character is
    // kept with the id cleaned (Go's TestNoticeModelIDIsSanitized).
    await post(`${hub.url}/dev/notice`, { event: 'payout_pending', severity: 'info', message: 'A payout is pending.' });
    await post(`${hub.url}/dev/notice`, { event: 'traffic_withheld', message: 'Withheld.', model_id: 'org/m\u0000odel' });
    await until(async () => ((await stack!.agent.invoke('notices.list', {})) as unknown[]).length === 2, 'good notices kept');
    const [latest] = (await stack.agent.invoke('notices.list', {})) as Array<{ event: string; modelId?: string }>;
    expect(latest).toMatchObject({ event: 'traffic_withheld', modelId: 'org/model' });
  });
});
