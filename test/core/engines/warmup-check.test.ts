// The warmup greeting's reply, checked as Go's warmup_validation.go does (warmup_validation_test.go's cases).
import { describe, expect, it } from 'vitest';
import { checkGreeting } from '../../../src/core/engines/warmup-check';

const reply = (content: string, finish = 'stop', extra: Record<string, unknown> = {}) => ({
  choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason: finish }],
});

describe('checkGreeting', () => {
  it('a short assistant greeting that ends passes', () => {
    expect(checkGreeting(reply('Hello! How can I help you today?'))).toEqual({ ok: true });
  });

  it('a leaked chat delimiter fails and names it, with what to fix', () => {
    for (const marker of ['<|im_start|>', '<|im_end|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>', '[INST]', '[/INST]']) {
      const v = checkGreeting(reply(`Hello!${marker}`));
      expect(v, marker).toEqual({
        ok: false,
        code: 'leaked_delimiter',
        error: `the chat template leaks \`${marker}\`: check the engine's chat template and stop tokens`,
      });
    }
  });

  it('a role boundary at a line start fails; the word inside a sentence does not', () => {
    expect(checkGreeting(reply('Hello!\nUser: and then'))).toMatchObject({ ok: false, code: 'role_boundary' });
    expect(checkGreeting(reply('  assistant : hi'))).toMatchObject({ ok: false, code: 'role_boundary' });
    expect(checkGreeting(reply('Ask the user: what do you need?'))).toEqual({ ok: true });
  });

  it('the budget spent on visible text fails; spent thinking is a warning', () => {
    expect(checkGreeting(reply('Hello hello hello', 'length'))).toMatchObject({ ok: false, code: 'budget_exhausted' });
    expect(checkGreeting(reply('', 'length'))).toMatchObject({ ok: false, code: 'budget_exhausted' });
    const thinking = checkGreeting(reply('', 'length', { reasoning_content: 'The user greets me, so I should…' }));
    expect(thinking).toMatchObject({ ok: true, warning: expect.stringContaining('thinking') });
  });

  it('an empty reply, no choices, another role or an error body fail', () => {
    expect(checkGreeting(reply('   '))).toMatchObject({ ok: false, code: 'empty_reply' });
    expect(checkGreeting({ choices: [] })).toMatchObject({ ok: false, code: 'no_reply' });
    expect(checkGreeting({ choices: [{ message: { role: 'user', content: 'Hi' }, finish_reason: 'stop' }] })).toMatchObject({ ok: false, code: 'wrong_role' });
    expect(checkGreeting({ error: { message: 'boom' } })).toMatchObject({ ok: false, code: 'engine_error' });
    // A reasoning-only reply that ended is an answer.
    expect(checkGreeting(reply('', 'stop', { reasoning: 'hm' }))).toEqual({ ok: true });
  });
});
