// The zod-free channel list the preload uses must match the schema map exactly.
import { describe, expect, it } from 'vitest';
import { INVOKE_CHANNELS, isInvokeChannel } from '../../../src/shared/bridge/channels';
import { invokeSchemas } from '../../../src/shared/bridge/schemas';

describe('bridge channels', () => {
  it('lists exactly the channels that have schemas', () => {
    expect([...INVOKE_CHANNELS].sort()).toEqual(Object.keys(invokeSchemas).sort());
  });
  it('refuses anything else, including prototype names', () => {
    for (const bad of ['', 'constructor', '__proto__', 'toString', 'snapshot.get ', 'SNAPSHOT.GET', 42, null]) expect(isInvokeChannel(bad)).toBe(false);
    expect(isInvokeChannel('snapshot.get')).toBe(true);
  });
});
