// validateSettingsPatch: each bad field of a console patch comes back under its name.
import { describe, expect, it } from 'vitest';
import { validateSettingsPatch } from '../../../src/core/owner/settings-patch';

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
