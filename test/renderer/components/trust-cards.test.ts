// The Dashboard's trust cards: the models the hub did not register and its upgrade advice, and each served
// model's weights (progress while hashing, the composite once verified, why when unlocated), rendered as the
// console renders them from a snapshot.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import { TrustCardsView } from '../../../src/renderer/components/TrustCards';

async function render(part: Pick<AgentSnapshot, 'hubView' | 'weights'>): Promise<string> {
  return renderToStaticMarkup(createElement(TrustCardsView, { view: part.hubView, weights: part.weights }));
}

describe('TrustCards', () => {
  it('lists the models the hub did not register and its upgrade advice', async () => {
    const html = await render({
      hubView: {
        registeredModels: ['a'],
        notRegistered: ['org/b'],
        registeredAt: 1,
        upgrade: { running: '0.5.0', latest: '0.6.0', message: 'Provider 0.6.0 adds <b>images</b>.', at: 1_750_000_000_000 },
      },
    });
    expect(html).toMatch(/data-testid="hub-not-registered-model"[^>]*>org\/b</);
    expect(html).toContain('no requests come for it');
    expect(html).toContain('provider release 0.6.0 is current (this node speaks 0.5.0)');
    // The hub's words are text, never markup.
    expect(html).toContain('&lt;b&gt;images&lt;/b&gt;');
  });

  it('shows hashing progress as "hashing weights: X of Y GB", the composite once hashed ("hashed", never "verified": nothing checked it against the network), and why a model is unlocated', async () => {
    const html = await render({
      weights: {
        models: [
          { model: 'big', state: 'hashing', source: 'computed', files: 3, totalBytes: 14.9e9, doneBytes: 7.2e9 },
          { model: 'tiny', state: 'verified', source: 'computed', files: 1, totalBytes: 602_816, doneBytes: 602_816, compositeHash: 'ab'.repeat(32) },
          { model: 'lms', state: 'unlocated', files: 0, totalBytes: 0, doneBytes: 0, reason: 'LM Studio does not say where its model files are' },
        ],
      },
    });
    expect(html).toContain('hashing weights: 7.2 of 14.9 GB');
    expect(html).toMatch(/data-state="verified"[\s\S]*>hashed<[\s\S]*hashed here, not checked against the network’s hashes · sha256[\s\S]*abababababababab…/);
    expect(html).not.toMatch(/>verified</);
    expect(html).toContain('LM Studio does not say where its model files are. Fingerprint challenges for this model fail');
  });

  it('renders nothing when there is nothing to say', async () => {
    expect(await render({ hubView: { notRegistered: [] }, weights: { models: [] } })).toBe('');
  });
});
