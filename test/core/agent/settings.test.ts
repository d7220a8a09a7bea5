// SettingsFile (the owner's console choices in <home>/settings.json) and validateSettingsPatch.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsFile, validateSettingsPatch } from '../../../src/core/agent/settings';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-settings-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

describe('SettingsFile', () => {
  it('starts empty and writes nothing until updated', () => {
    const s = SettingsFile.in(home);
    expect(s.get()).toEqual({});
    expect(fs.existsSync(path.join(home, 'settings.json'))).toBe(false);
  });

  it('update persists, and a new instance reads it back', () => {
    const s = SettingsFile.in(home);
    s.update((d) => ({ ...d, nodeName: 'rig', retentionDays: 30, models: { m: { enabled: false, maxConcurrent: 2 } } }));
    s.update((d) => ({ ...d, theme: 'dark', extraEndpoints: [{ url: 'http://10.0.0.2:8000' }] }));
    const again = SettingsFile.in(home).get();
    expect(again).toEqual({ nodeName: 'rig', retentionDays: 30, theme: 'dark', models: { m: { enabled: false, maxConcurrent: 2 } }, extraEndpoints: [{ url: 'http://10.0.0.2:8000' }] });
    expect(fs.readdirSync(home)).toEqual(['settings.json']);
  });

  it('update hands the function a copy: a mutation that is not returned does not stick', () => {
    const s = SettingsFile.in(home);
    s.update(() => ({ models: { a: { enabled: true } } }));
    s.update((d) => {
      d.models!.a!.enabled = false;
      return { nodeName: 'x' };
    });
    expect(s.get()).toEqual({ nodeName: 'x' });
  });

  it('creates the home folder on first write', () => {
    const s = new SettingsFile(path.join(home, 'a', 'b', 'settings.json'));
    s.update(() => ({ onboarded: true }));
    expect(new SettingsFile(path.join(home, 'a', 'b', 'settings.json')).get()).toEqual({ onboarded: true });
  });

  it.each([
    ['not JSON', '{"nodeName": '],
    ['a wrong type', '{"nodeName": 5}'],
    ['a bad theme', '{"theme": "neon"}'],
  ])('a damaged file (%s) reads as empty', (_name, text) => {
    fs.writeFileSync(path.join(home, 'settings.json'), text);
    expect(SettingsFile.in(home).get()).toEqual({});
  });
});

describe('validateSettingsPatch', () => {
  it('a good patch has no errors', () => {
    expect(
      validateSettingsPatch({
        hubUrl: 'wss://inference-ws.swanchain.io',
        serviceUrl: 'https://inference.swanchain.io',
        nodeName: 'my rig_01.home-lab',
        providerKey: 'sk-prov-abcdefgh12345678',
        gatewayListen: '127.0.0.1:18080',
        retentionDays: 365,
        gatewayEnabled: true,
        theme: 'dark',
      }),
    ).toEqual({});
    expect(validateSettingsPatch({})).toEqual({});
    // Empty service URL and empty key mean "use the default" / "remove the key".
    expect(validateSettingsPatch({ serviceUrl: '', providerKey: '' })).toEqual({});
    // A key pasted with spaces around it is fine (it is trimmed when saved).
    expect(validateSettingsPatch({ providerKey: '  sk-prov-abcdefgh12345678\n' })).toEqual({});
  });

  it.each([
    ['hubUrl', { hubUrl: 'https://inference.swanchain.io' }, 'The hub URL must start with ws:// or wss://'],
    ['hubUrl', { hubUrl: 'ws://' }, 'ws:// or wss://'],
    ['serviceUrl', { serviceUrl: 'ftp://x' }, 'The service URL must start with http:// or https://'],
    ['nodeName', { nodeName: '' }, 'Use 1 to 64 letters'],
    ['nodeName', { nodeName: 'x'.repeat(65) }, 'Use 1 to 64 letters'],
    ['nodeName', { nodeName: 'rig<script>' }, 'Use 1 to 64 letters'],
    ['providerKey', { providerKey: 'short' }, 'does not look like a provider key'],
    ['providerKey', { providerKey: 'sk-prov has spaces' }, 'without spaces'],
    ['gatewayListen', { gatewayListen: 'localhost' }, 'Use host:port, for example 127.0.0.1:18080.'],
    ['gatewayListen', { gatewayListen: '127.0.0.1:0' }, 'host:port'],
    ['gatewayListen', { gatewayListen: '127.0.0.1:70000' }, 'host:port'],
    ['retentionDays', { retentionDays: 0 }, 'Keep history for 1 to 3650 days.'],
    ['retentionDays', { retentionDays: 3651 }, '1 to 3650'],
  ] as const)('%s: %j', (field, patch, text) => {
    const errors = validateSettingsPatch(patch);
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field]).toContain(text);
  });

  it('reports every bad field at once', () => {
    const errors = validateSettingsPatch({ hubUrl: 'http://x', nodeName: '', retentionDays: -1, gatewayListen: 'x' });
    expect(Object.keys(errors).sort()).toEqual(['gatewayListen', 'hubUrl', 'nodeName', 'retentionDays']);
  });
});
