import { describe, expect, it } from 'vitest';
import { NETWORK_STAND_INS_ENV, networkStandIns } from '../../../src/core/config/network-stand-ins';
import { LOCAL_DEV_HUB, NETWORKS } from '../../../src/shared/networks';

const env = (v: unknown) => ({ [NETWORK_STAND_INS_ENV]: typeof v === 'string' ? v : JSON.stringify(v) });

describe('network stand-ins (tests only)', () => {
  it('unset: every address is used as configured', () => {
    const s = networkStandIns({});
    expect(s.active).toEqual([]);
    expect(s.hubUrl(NETWORKS.mainnet.hubUrl)).toBe(NETWORKS.mainnet.hubUrl);
    expect(s.serviceUrl(NETWORKS.mainnet.serviceUrl)).toBe(NETWORKS.mainnet.serviceUrl);
  });

  it("maps a named network's addresses to the stand-in, and nothing else", () => {
    const s = networkStandIns(env({ mainnet: { hubUrl: 'ws://127.0.0.1:4001', serviceUrl: 'http://127.0.0.1:4002' } }));
    expect(s.active).toEqual([{ network: 'mainnet', hubUrl: 'ws://127.0.0.1:4001', serviceUrl: 'http://127.0.0.1:4002' }]);
    expect(s.hubUrl(NETWORKS.mainnet.hubUrl)).toBe('ws://127.0.0.1:4001');
    expect(s.hubUrl(`${NETWORKS.mainnet.hubUrl}/`)).toBe('ws://127.0.0.1:4001');
    expect(s.hubUrl(`${NETWORKS.mainnet.hubUrl}/ws`)).toBe('ws://127.0.0.1:4001/ws');
    expect(s.serviceUrl(NETWORKS.mainnet.serviceUrl)).toBe('http://127.0.0.1:4002');
    // testnet is not stood in for; a custom hub never is.
    expect(s.hubUrl(NETWORKS.testnet.hubUrl)).toBe(NETWORKS.testnet.hubUrl);
    expect(s.serviceUrl(NETWORKS.testnet.serviceUrl)).toBe(NETWORKS.testnet.serviceUrl);
    expect(s.hubUrl(LOCAL_DEV_HUB.hubUrl)).toBe(LOCAL_DEV_HUB.hubUrl);
  });

  it('refuses an address off this machine, an unknown network, or a malformed value', () => {
    expect(() => networkStandIns(env({ mainnet: { hubUrl: 'wss://evil.example', serviceUrl: 'http://127.0.0.1:1' } }))).toThrow(/mainnet\.hubUrl/);
    expect(() => networkStandIns(env({ mainnet: { hubUrl: 'ws://127.0.0.1:1', serviceUrl: 'http://10.0.0.1:1' } }))).toThrow(/mainnet\.serviceUrl/);
    expect(() => networkStandIns(env({ devnet: { hubUrl: 'ws://127.0.0.1:1', serviceUrl: 'http://127.0.0.1:1' } }))).toThrow(NETWORK_STAND_INS_ENV);
    expect(() => networkStandIns(env('{not json'))).toThrow(NETWORK_STAND_INS_ENV);
  });
});
