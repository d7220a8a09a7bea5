// Config errors that point at the right place in plain words: an unclosed quote in config.toml, and a
// wrong type in models.json reported at the field's line (not the model's key line).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/core/config/config';
import { tempHome } from '../../support/stack';

let home: string | undefined;
afterEach(() => {
  if (home) fs.rmSync(home, { recursive: true, force: true });
  home = undefined;
});

function load(toml: string, models?: string): ConfigError {
  home = tempHome();
  fs.writeFileSync(path.join(home, 'config.toml'), toml);
  if (models !== undefined) fs.writeFileSync(path.join(home, 'models.json'), models);
  try {
    loadConfig(path.join(home, 'config.toml'), {});
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('the config loaded');
}

it('an unclosed quote in config.toml says so, at its line', () => {
  const e = load('[API]\nNodeName = "my rig\n[Inference]\nEnable = true\n');
  expect(e).toMatchObject({ code: 'toml_syntax', line: 2 });
  // The point of this one is the wording: the parser's "control characters" would mislead.
  expect(e.message).toMatch(/not closed/);
  expect(e.message).not.toMatch(/control characters/);
});

it('other TOML errors keep the parser message', () => {
  const e = load('[API\nNodeName = "x"\n');
  expect(e).toMatchObject({ code: 'toml_syntax', line: 1 });
});

it('a wrong type in models.json points at the field line', () => {
  const models = JSON.stringify(
    { 'model-a': { endpoint: 'http://127.0.0.1:8000' }, 'model-b': { endpoint: 'http://127.0.0.1:8001', max_concurrent: 'four' } },
    null,
    2,
  );
  const lines = models.split('\n');
  const fieldLine = lines.findIndex((l) => l.includes('"max_concurrent"')) + 1;
  const keyLine = lines.findIndex((l) => l.includes('"model-b"')) + 1;
  expect(fieldLine).not.toBe(keyLine);
  const e = load('[API]\nNodeName = "x"\n', models);
  expect(e.file.endsWith('models.json')).toBe(true);
  expect(e).toMatchObject({ code: 'invalid_model_entry', line: fieldLine, setting: 'model-b.max_concurrent' });
});
