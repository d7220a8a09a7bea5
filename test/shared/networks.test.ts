// The named networks (HUB-PROTOCOL.md "Addresses") and how a pair of addresses is recognised.
import { describe, expect, it } from 'vitest';
import { LOCAL_DEV_HUB, NETWORKS, networkOf } from '../../src/shared/networks';
import { configTemplate } from '../../src/core/config/template';
import { parse } from 'smol-toml';

describe('networks', () => {
  it("mainnet and testnet are the Go provider's addresses; anything else is a custom hub", () => {
    expect(NETWORKS.mainnet).toMatchObject({ hubUrl: 'wss://inference-ws.swanchain.io', serviceUrl: 'https://api.swanchain.io' });
    expect(NETWORKS.testnet).toMatchObject({ hubUrl: 'wss://inference-ws-dev.swanchain.io', serviceUrl: 'https://inference-dev.swanchain.io' });
    expect(networkOf('wss://inference-ws.swanchain.io')).toBe('mainnet');
    expect(networkOf('wss://inference-ws.swanchain.io/ws/')).toBe('mainnet');
    expect(networkOf('WSS://inference-ws-dev.swanchain.io')).toBe('testnet');
    expect(networkOf(LOCAL_DEV_HUB.hubUrl)).toBe('custom');
    expect(networkOf('wss://inference-ws.swanchain.io.evil.example')).toBe('custom');
  });

  it('the first-run config template: mainnet by default, the dev hub or testnet when asked', () => {
    const read = (t: string) => (parse(t) as { Inference: { WebSocketURL: string; ServiceURL: string } }).Inference;
    expect(read(configTemplate('n'))).toMatchObject({ WebSocketURL: NETWORKS.mainnet.hubUrl, ServiceURL: NETWORKS.mainnet.serviceUrl });
    expect(read(configTemplate('n', { network: 'testnet' }))).toMatchObject({ WebSocketURL: NETWORKS.testnet.hubUrl, ServiceURL: NETWORKS.testnet.serviceUrl });
    expect(read(configTemplate('n', { network: 'local' }))).toMatchObject({ WebSocketURL: LOCAL_DEV_HUB.hubUrl, ServiceURL: LOCAL_DEV_HUB.serviceUrl });
    expect((parse(configTemplate('n', { engineHosts: ['http://10.0.0.2:8000'] })) as { Agent: { EngineHosts: string[] } }).Agent.EngineHosts).toEqual([
      'http://10.0.0.2:8000',
    ]);
  });
});
