// SettingsFile: the owner's console choices in <home>/settings.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsFile } from '../../../src/core/config/settings-file';

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
    expect(again).toEqual({
      nodeName: 'rig',
      retentionDays: 30,
      theme: 'dark',
      models: { m: { enabled: false, maxConcurrent: 2 } },
      extraEndpoints: [{ url: 'http://10.0.0.2:8000' }],
    });
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
