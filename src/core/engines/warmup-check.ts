// Whether the warmup greeting's answer shows a model that serves chat properly (Go's warmup_validation.go
// checks the same things). Only this synthetic "Hi" is inspected: a client's own prompts and answers may
// contain any of these strings. What fails: a leaked chat delimiter (the template or the stop tokens are
// wrong, so every answer would carry it), a role boundary written into the reply (the model talks on past
// its turn), the whole budget spent on visible text (it does not stop), an empty reply, a reply in another
// role. A reasoning model that spends the budget thinking serves fine: a warning, not a failure.
import type { WarmupProblem } from '../../shared/views/models';

/** The greeting's budget (Go's warmupMaxTokens). */
export const WARMUP_MAX_TOKENS = 64;
export const WARMUP_PROMPT = 'Hi';

const DELIMITERS = ['<|im_start|>', '<|im_end|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>', '[INST]', '[/INST]'];
const ROLE_BOUNDARY = /^\s*(user|assistant|system)\s*:/im;
const FIX = "check the engine's chat template and stop tokens";

export type GreetingVerdict = { ok: true; warning?: string } | { ok: false; code: WarmupProblem; error: string };

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Reads a chat completion's JSON (the engine's answer to the greeting). */
export function checkGreeting(json: unknown): GreetingVerdict {
  const answer = json && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  if (answer.error !== undefined && answer.error !== null)
    return { ok: false, code: 'engine_error', error: `the engine answered the greeting with an error: ${JSON.stringify(answer.error).slice(0, 200)}` };
  const choices = Array.isArray(answer.choices) ? (answer.choices as unknown[]) : [];
  if (choices.length === 0) return { ok: false, code: 'no_reply', error: "the engine's answer to the greeting has no choices; check that the model is loaded" };
  let warning: string | undefined;
  for (const raw of choices) {
    const choice = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const message = choice.message && typeof choice.message === 'object' ? (choice.message as Record<string, unknown>) : {};
    const role = str(message.role);
    if (role !== '' && role !== 'assistant')
      return { ok: false, code: 'wrong_role', error: `the greeting came back in the role "${role.slice(0, 32)}", not the assistant's: ${FIX}` };
    const content = str(message.content);
    const leaked = DELIMITERS.find((d) => content.includes(d));
    if (leaked) return { ok: false, code: 'leaked_delimiter', error: `the chat template leaks \`${leaked}\`: ${FIX}` };
    const boundary = ROLE_BOUNDARY.exec(content);
    if (boundary)
      return { ok: false, code: 'role_boundary', error: `the reply writes a turn of its own ("${boundary[1]}:"), so the model talks past its answer: ${FIX}` };
    const reasoning = str(message.reasoning) + str(message.reasoning_content);
    const visible = content + str(message.refusal);
    if (choice.finish_reason === 'length') {
      if (visible.trim() !== '' || reasoning.trim() === '') {
        return { ok: false, code: 'budget_exhausted', error: `the reply to "Hi" did not end within ${WARMUP_MAX_TOKENS} tokens: ${FIX}` };
      }
      warning = `the model spent the whole ${WARMUP_MAX_TOKENS}-token greeting thinking (a reasoning model); it serves, but a short max_tokens may leave answers empty`;
      continue;
    }
    if ((visible + reasoning).trim() === '')
      return {
        ok: false,
        code: 'empty_reply',
        error: 'the engine answered the greeting with an empty reply; check that the model loaded and its chat template',
      };
  }
  return warning ? { ok: true, warning } : { ok: true };
}
