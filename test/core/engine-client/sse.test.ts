// Every real engine trace parses to the text and token counts read by hand from the files.
import { describe, expect, it } from 'vitest';
import { parseSse } from '../../support/sse-parse';
import type { EngineStreamEvent } from '../../../src/core/engine-client/types';
import { listTraces, readTrace } from '../../support/traces';

interface Expected {
  text: string;
  reasoning?: string;
  finish?: string;
  /** [prompt, completion] */
  usage?: [number, number];
  done: boolean;
  truncated: boolean;
  chunks: number;
  errors?: { message: string; statusCode?: number }[];
  completions?: boolean;
}

const VLLM_ERR = 'EngineCore encountered an issue. See stack trace (above) for the root cause.';

// Values read from the trace files themselves (see test/fixtures/engine-traces/SOURCES.md).
const EXPECTED: Record<string, Expected> = {
  'llamacpp-chat-include-usage.sse': { text: '', reasoning: 'Analyze', finish: 'length', usage: [13, 10], done: true, truncated: false, chunks: 4 },
  'llamacpp-chat-midstream-error.sse': {
    text: 'Certainly',
    done: false,
    truncated: true,
    chunks: 2,
    errors: [{ message: 'context shift is disabled', statusCode: 500 }],
  },
  // No usage: timings on the finish chunk, prompt_n 24 + cache_n 0, predicted_n 200.
  'llamacpp-chat-reasoning.sse': { text: '', reasoning: "Here's43", finish: 'length', usage: [24, 200], done: true, truncated: false, chunks: 6 },
  'llamacpp-chat-tool-calls.sse': { text: '', finish: 'tool_calls', usage: [318, 113], done: true, truncated: false, chunks: 8 },
  'llamacpp-completions-basic.sse': {
    text: 'Hello! How can I help you today? 😊',
    finish: 'stop',
    usage: [13, 12],
    done: true,
    truncated: false,
    chunks: 12,
    completions: true,
  },
  'lmstudio-chat-basic-v0.3.sse': { text: '\n', finish: 'stop', done: true, truncated: false, chunks: 2 },
  'lmstudio-chat-reasoning-v0.3.9.sse': { text: '', reasoning: 'le? An', done: false, truncated: true, chunks: 3 },
  'lmstudio-chat-tool-calls-v0.4.sse': { text: '', reasoning: '\n', finish: 'tool_calls', usage: [163, 19], done: true, truncated: false, chunks: 5 },
  'ollama-chat-classic-include-usage.sse': { text: 'Ping-ok.', finish: 'stop', usage: [32, 4], done: true, truncated: false, chunks: 5 },
  // Ollama loses the error text: an empty chunk with model "" and a silent end.
  'ollama-chat-classic-midstream-error.sse': { text: 'The sky', done: false, truncated: true, chunks: 3 },
  'ollama-chat-classic-tool-calls.sse': { text: '', finish: 'tool_calls', usage: [161, 24], done: true, truncated: false, chunks: 3 },
  'ollama-chat-v0.32-include-usage.sse': { text: 'Hello!', finish: 'stop', usage: [12, 3], done: true, truncated: false, chunks: 4 },
  'ollama-chat-v0.32-reasoning.sse': { text: '1', reasoning: 'User asks', finish: 'stop', done: true, truncated: false, chunks: 4 },
  // Zero usage on every chunk, real usage only on the last: never summed.
  'ollama-completions-include-usage.sse': {
    text: '...in a far-off kingdom',
    finish: 'stop',
    usage: [15, 5],
    done: true,
    truncated: false,
    chunks: 7,
    completions: true,
  },
  'openai-chat-basic.sse': {
    text:
      'Hi there! How can I help today? I can answer questions, explain concepts, help with writing or brainstorming, code, ' +
      'plan something, and more. Tell me what you’d like to work on or a topic you’re curious about.',
    finish: 'stop',
    done: true,
    truncated: false,
    chunks: 50,
  },
  // All 100 tokens went to hidden reasoning: no text, completion_tokens 100.
  'openai-chat-include-usage.sse': { text: '', finish: 'length', usage: [12, 100], done: true, truncated: false, chunks: 3 },
  'openai-chat-tool-calls.sse': { text: '', finish: 'tool_calls', done: true, truncated: false, chunks: 10 },
  'openai-completions-basic.sse': {
    text: ' + fib(n-3)\n\ndef fib2(n):\n    if n <= 1:\n        return n\n    else:\n',
    finish: 'length',
    done: true,
    truncated: false,
    chunks: 25,
    completions: true,
  },
  'openai-completions-include-usage.sse': {
    text: ' + fib(n-3) + fib(n-4)\n\ndef fibn(n):\n    if n <= 1:\n       ',
    finish: 'length',
    usage: [31, 25],
    done: true,
    truncated: false,
    chunks: 26,
    completions: true,
  },
  'sglang-chat-classic-pydantic.sse': {
    text: '',
    reasoning: 'The user wants a paragraph with exactly 100',
    finish: 'stop',
    usage: [31, 12],
    done: true,
    truncated: false,
    chunks: 12,
  },
  'sglang-chat-reasoning-include-usage.sse': {
    text: '',
    reasoning: 'We need to IDs',
    finish: 'length',
    usage: [2677, 200],
    done: true,
    truncated: false,
    chunks: 7,
  },
  'sglang-chat-tool-calls-parallel.sse': {
    text: "I'll get the weather for both cities.\n\n",
    reasoning:
      'The user wants weather in Paris and Tokyo. The instructions say to call the tool once per city, and these are ' +
      'independent calls, so I should make them in the same block.',
    finish: 'tool_calls',
    done: true,
    truncated: false,
    chunks: 20,
  },
  'sglang-completions-include-usage.sse': {
    text: ' Paris. It is',
    finish: 'length',
    usage: [7, 4],
    done: true,
    truncated: false,
    chunks: 5,
    completions: true,
  },
  'tgi-chat-basic.sse': { text: 'safe', finish: 'stop', done: true, truncated: false, chunks: 2 },
  'tgi-chat-include-usage.sse': { text: 'OK!', finish: 'stop', usage: [39, 3], done: true, truncated: false, chunks: 4 },
  'tgi-chat-keepalive-midstream-error.sse': {
    text: 'OK',
    done: true,
    truncated: false,
    chunks: 1,
    errors: [{ message: 'Request failed during generation: Server error: CUDA out of memory. Tried to allocate 2.00 GiB', statusCode: 422 }],
  },
  // TGI tool streams never carry a finish_reason; [DONE] says the answer is complete.
  'tgi-chat-tool-calls.sse': { text: '', done: true, truncated: false, chunks: 17 },
  'tgi-completions-basic.sse': {
    text: ' A Beginner’s Guide\nDeep learning is a subset',
    finish: 'length',
    usage: [6, 10],
    done: true,
    truncated: false,
    chunks: 10,
    completions: true,
  },
  'vllm-chat-basic.sse': { text: 'Okay. Sure.', finish: 'stop', done: true, truncated: false, chunks: 6 },
  'vllm-chat-midstream-error-legacy.sse': { text: 'Okay', done: true, truncated: false, chunks: 2, errors: [{ message: VLLM_ERR, statusCode: 400 }] },
  'vllm-chat-midstream-error.sse': { text: 'Okay', done: true, truncated: false, chunks: 2, errors: [{ message: VLLM_ERR, statusCode: 400 }] },
  'vllm-chat-reasoning-include-usage.sse': {
    text: '',
    reasoning: 'We need toSTATE',
    finish: 'length',
    usage: [2674, 200],
    done: true,
    truncated: false,
    chunks: 6,
  },
  // Running usage on every chunk: the last one counts, never the sum.
  'vllm-chat-tool-calls-continuous-usage.sse': { text: '', finish: 'tool_calls', usage: [10663, 79], done: true, truncated: false, chunks: 11 },
  'vllm-chat-tool-calls-final-args-resend.sse': { text: '', finish: 'tool_calls', usage: [10531, 176], done: true, truncated: false, chunks: 21 },
  'vllm-completions-include-usage.sse': {
    text: "! I'm a student",
    finish: 'length',
    usage: [12, 5],
    done: true,
    truncated: false,
    chunks: 6,
    completions: true,
  },
};

async function* bytes(buf: Buffer, size = buf.length): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function collect(buf: Buffer, completions?: boolean, size?: number): Promise<EngineStreamEvent[]> {
  const out: EngineStreamEvent[] = [];
  out.push(...(await parseSse(bytes(buf, size), { completions })));
  return out;
}

function summarize(events: EngineStreamEvent[]) {
  const chunks = events.filter((e) => e.type === 'chunk');
  const errors = events.filter((e) => e.type === 'error').map((e) => ({ message: e.message, statusCode: e.statusCode }));
  const ends = events.filter((e) => e.type === 'end');
  const end = ends[0];
  const finishes = chunks.map((c) => c.finishReason).filter(Boolean);
  return {
    text: chunks.map((c) => c.text).join(''),
    reasoning: chunks.map((c) => c.reasoning).join(''),
    finish: finishes[finishes.length - 1],
    usage: end?.usage ? [end.usage.promptTokens, end.usage.completionTokens] : undefined,
    done: end?.sawDone,
    truncated: end?.truncated,
    chunks: chunks.length,
    errors,
    ends: ends.length,
    endIsLast: events[events.length - 1]?.type === 'end',
  };
}

function expectedSummary(e: Expected) {
  return {
    text: e.text,
    reasoning: e.reasoning ?? '',
    finish: e.finish,
    usage: e.usage,
    done: e.done,
    truncated: e.truncated,
    chunks: e.chunks,
    errors: (e.errors ?? []).map((x) => ({ message: x.message, statusCode: x.statusCode })),
    ends: 1,
    endIsLast: true,
  };
}

describe('the SSE parser on the real traces', () => {
  it('the table covers every trace in the folder', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(listTraces());
  });

  for (const [file, exp] of Object.entries(EXPECTED)) {
    it(`${file} parses to the expected text and tokens`, async () => {
      const buf = readTrace(file);
      expect(summarize(await collect(buf, exp.completions))).toEqual(expectedSummary(exp));
      // The same bytes with CRLF line ends, and TGI <= 2.0 framing (`data:` without a space).
      const crlf = Buffer.from(buf.toString('utf8').replace(/\n/g, '\r\n'));
      expect(summarize(await collect(crlf, exp.completions, 7))).toEqual(expectedSummary(exp));
      const nospace = Buffer.from(buf.toString('utf8').replace(/^data: /gm, 'data:'));
      expect(summarize(await collect(nospace, exp.completions))).toEqual(expectedSummary(exp));
    });
  }

  it('chunk data is the JSON object verbatim', async () => {
    const buf = readTrace('sglang-chat-tool-calls-parallel.sse');
    const lines = buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('data: {'));
    const chunks = (await collect(buf)).filter((e) => e.type === 'chunk');
    expect(chunks.map((c) => JSON.stringify(c.data))).toEqual(lines.map((l) => JSON.stringify(JSON.parse(l.slice(6)))));
  });

  for (const file of ['tgi-completions-basic.sse', 'llamacpp-completions-basic.sse', 'tgi-chat-keepalive-midstream-error.sse']) {
    it(`${file} split at every byte boundary parses the same`, async () => {
      const buf = readTrace(file);
      const exp = expectedSummary(EXPECTED[file] as Expected);
      const completions = EXPECTED[file]?.completions;
      for (let cut = 1; cut < buf.length; cut++) {
        const two = async function* () {
          yield buf.subarray(0, cut);
          yield buf.subarray(cut);
        };
        const out: EngineStreamEvent[] = [];
        out.push(...(await parseSse(two(), { completions })));
        expect(summarize(out), `cut at ${cut}`).toEqual(exp);
      }
      expect(summarize(await collect(buf, completions, 1))).toEqual(exp);
    });
  }
});

describe('the SSE parser: edge cases', () => {
  const parse = (s: string, completions?: boolean) => collect(Buffer.from(s), completions).then(summarize);

  it('a byte order mark before the first event is dropped, also when it is split across reads', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n')]);
    for (const cut of [0, 1, 2, 3]) {
      const reads = async function* () {
        if (cut > 0) yield body.subarray(0, cut);
        yield body.subarray(cut);
      };
      const out: EngineStreamEvent[] = [];
      out.push(...(await parseSse(reads())));
      const s = summarize(out);
      expect(s.text, `cut at ${cut}`).toBe('Hi');
      expect(s.done).toBe(true);
    }
  });

  it('bytes that are not UTF-8 become U+FFFD; the events around them are kept', async () => {
    const body = Buffer.concat([
      Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('b"}}]}\n\ndata: [DONE]\n\n'),
    ]);
    const s = summarize(await collect(body));
    expect(s.text).toBe('a\ufffd\ufffdb');
    expect(s.done).toBe(true);
  });

  it('an LM Studio `event: error` frame becomes an error event', async () => {
    const s = await parse('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\nevent: error\ndata: {"error":{"message":"Model unloaded"}}\n\n');
    expect(s.errors).toEqual([{ message: 'Model unloaded', statusCode: undefined }]);
    expect(s.text).toBe('Hi');
    expect(s.truncated).toBe(true);
  });

  it('a plain-text error frame and a TGI 2.x string error are read', async () => {
    const s = await parse('event: error\ndata: out of memory\n\ndata: {"error":"Input validation error","error_type":"validation"}\n\ndata: [DONE]\n\n');
    expect(s.errors.map((e) => e.message)).toEqual(['out of memory', 'Input validation error']);
  });

  it('bad JSON gives an error and parsing continues', async () => {
    const s = await parse(
      'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {not json\n\ndata: 42\n\ndata: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    );
    expect(s.text).toBe('ab');
    expect(s.errors).toHaveLength(2);
    expect(s.errors[0]?.message).toContain('not JSON: {not json');
    expect(s.errors[0]?.statusCode).toBe(502);
    expect(s.done).toBe(true);
  });

  it('a body that is not SSE at all is reported', async () => {
    const s = await parse('<html><body>502 Bad Gateway</body></html>\n');
    expect(s.errors.map((e) => e.message)).toEqual(['the engine answered with something that is not an SSE stream']);
    expect(s.truncated).toBe(true);
  });

  it('a last event without its closing blank line is still read', async () => {
    const s = await parse('data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: [DONE]');
    expect(s.done).toBe(true);
    expect(s.text).toBe('x');
  });

  it('a read error mid-stream yields an error (502) and one end', async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n');
      throw new Error('socket hang up');
    }
    const out: EngineStreamEvent[] = [];
    out.push(...(await parseSse(broken())));
    const s = summarize(out);
    expect(s.errors).toEqual([{ message: 'the engine connection broke off mid-stream (socket hang up)', statusCode: 502 }]);
    expect(s.truncated).toBe(true);
    expect(s.ends).toBe(1);
  });

  it('token ids, usage: null and usage-only chunks are read', async () => {
    const events = await collect(
      Buffer.from(
        'data: {"choices":[{"index":0,"delta":{"content":"a"},"token_ids":[17]}],"usage":null}\n\n' +
          'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n',
      ),
    );
    const [first, second] = events.filter((e) => e.type === 'chunk');
    expect(first?.tokenIds).toEqual([17]);
    expect(first?.usage).toBeUndefined();
    expect(first?.emptyChoices).toBe(false);
    expect(second?.emptyChoices).toBe(true);
    expect(second?.usage).toEqual({ promptTokens: 3, completionTokens: 1 });
  });
});
