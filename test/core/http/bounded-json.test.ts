// The bounded JSON reader: size, depth and key count are measured before parsing, in one pass that never
// recurses; brackets, colons and escaped quotes inside strings do not count; each refusal has its code.
import { describe, expect, it } from 'vitest';
import { BoundedJsonError, JSON_LIMITS, parseJson, readJson, type JsonLimits } from '../../../src/core/http/bounded-json';

const L: JsonLimits = { maxBytes: 10_000, maxDepth: 5, maxKeys: 10 };
const nest = (n: number, open = '[', close = ']') => open.repeat(n) + close.repeat(n);
const code = (text: string | Buffer, limits = L) => {
  const r = readJson(text, limits);
  return r.ok ? 'ok' : r.code;
};

describe('parseJson', () => {
  it('parses what is within the limits', () => {
    expect(parseJson('{"a":[1,{"b":"c"}]}', L)).toEqual({ a: [1, { b: 'c' }] });
    expect(parseJson(Buffer.from('"é"'), L)).toBe('é');
    expect(code(nest(5))).toBe('ok');
  });

  it('refuses depth past the limit, arrays and objects alike, whatever the text is otherwise', () => {
    expect(code(nest(6))).toBe('too_deep');
    expect(code(`${'{"a":'.repeat(6)}1${'}'.repeat(6)}`)).toBe('too_deep');
    // Unbalanced or not: the depth is refused before JSON.parse sees it.
    expect(code('['.repeat(5000))).toBe('too_deep');
    // The two known crashes: a notice's details nested 5,000 deep, an engine answer ~6,000 deep.
    expect(code(`{"type":"notice","payload":{"event":"x","message":"m","details":${nest(5000)}}}`, JSON_LIMITS.hub)).toBe('too_deep');
    expect(code(`{"choices":[{"message":{"content":${nest(6000, '{"a":', '}').replace(/\{"a":\}/, '{"a":1}')}}}]}`, JSON_LIMITS.engine)).toBe('too_deep');
  });

  it('brackets, colons and escaped quotes inside strings do not count', () => {
    expect(code(JSON.stringify({ s: '[[[[[[[[[[{{{{{{:::::::::::::::::' }))).toBe('ok');
    expect(code(JSON.stringify({ s: 'a\\"[[[[[[[[' }))).toBe('ok');
    expect(code(JSON.stringify({ s: 'ends with a backslash \\', t: '[[[[[[[[' }))).toBe('ok');
    expect(parseJson(JSON.stringify({ s: '\\\\"[[[[[[' }), L)).toEqual({ s: '\\\\"[[[[[[' });
  });

  it('refuses more keys than the limit, and more bytes', () => {
    const keys = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
    expect(code(keys(10))).toBe('ok');
    expect(code(keys(11))).toBe('too_many_keys');
    expect(code(`"${'x'.repeat(10_000)}"`)).toBe('too_large');
    expect(code(`"${'é'.repeat(4000)}"`)).toBe('ok');
    expect(code(`"${'é'.repeat(6000)}"`)).toBe('too_large'); // 12,002 UTF-8 bytes in 6,002 characters
    expect(code(Buffer.alloc(10_001, 0x20))).toBe('too_large');
  });

  it('malformed text is not_json, as a BoundedJsonError', () => {
    expect(code('{"a":')).toBe('not_json');
    expect(code('"unterminated')).toBe('not_json');
    expect(() => parseJson('nope', L)).toThrow(BoundedJsonError);
  });
});
