// A hub that says its network is simulated (the dev hub: register ack extension "simulated-network") makes
// the snapshot say so, and the verdict names it instead of the Swan network; a hub that does not (the Go
// hub's ack) leaves both as they are.
import { afterEach, describe, expect, it } from 'vitest';
import { GoHub } from '../../support/conformance/go-hub';
import { registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
let goHub: GoHub | undefined;
afterEach(async () => {
  await stack?.close();
  await goHub?.close();
  stack = undefined;
  goHub = undefined;
});

describe('a simulated hub', () => {
  it('the dev hub: simulatedHub in the snapshot, and the serving line never says the Swan network', async () => {
    // A model its catalogue lists, on a hub that pays (simulated money): the verdict is "serving".
    stack = await startStack({ engines: [{ models: ['simulated-llama-3.1-8b-instruct'] }], hub: { earningsEnabled: true } });
    await registered(stack);
    await until(() => stack!.agent.snapshot().simulatedHub === true, 'the snapshot says simulated');
    await until(() => stack!.agent.snapshot().verdict.state === 'serving', 'serving');
    expect(stack.agent.snapshot().verdict.headline).toBe('Serving 1 model to a simulated network (a dev hub): routed and earning.');
  });

  it("a hub whose ack says nothing of it (the Go hub's): not simulated", async () => {
    goHub = new GoHub({ token: 'sk-prov-test-0000000000' });
    await goHub.listen();
    stack = await startStack({ hub: false, hubUrl: goHub.wsUrl, key: 'sk-prov-test-0000000000' });
    await until(() => stack!.agent.hubStatus().connected, 'registered with the Go hub stand-in');
    expect(stack.agent.snapshot().simulatedHub).toBeUndefined();
  });
});
