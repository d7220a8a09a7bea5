// How the console reads a custom hub as typed, and names networks and the network's own registration step.
import { expect, it } from 'vitest';
import { customAddresses, networkLabel, registrationStep } from '../../../src/renderer/lib/network';

it("a custom hub: HOST:PORT means ws:// and its API http://; an empty API address is the hub's own", () => {
  expect(customAddresses('127.0.0.1:8081', '')).toEqual({ hubUrl: 'ws://127.0.0.1:8081', serviceUrl: 'http://127.0.0.1:8081' });
  expect(customAddresses(' wss://hub.example:443 ', '')).toEqual({ hubUrl: 'wss://hub.example:443', serviceUrl: 'https://hub.example:443' });
  expect(customAddresses('ws://127.0.0.1:8081', '127.0.0.1:9000')).toEqual({ hubUrl: 'ws://127.0.0.1:8081', serviceUrl: 'http://127.0.0.1:9000' });
  expect(customAddresses('ws://h:1/ws', '')).toEqual({ hubUrl: 'ws://h:1/ws', serviceUrl: 'http://h:1' });
});

it("networks by name, and the network's registration step said as the network's", () => {
  expect(networkLabel('wss://inference-ws.swanchain.io')).toBe('Swan Inference mainnet');
  expect(networkLabel('ws://127.0.0.1:8081')).toBe('the custom hub at 127.0.0.1:8081');
  expect(registrationStep({ step: 4, totalSteps: 4, stepLabel: 'Active' })).toBe('Registration on the network: Active (4 of 4)');
  expect(registrationStep({ step: 1, totalSteps: 4 })).toBe('Registration on the network: step 1 of 4');
  expect(registrationStep({})).toBeNull();
});
