// src/core's folders import in one order (scripts/core-order.mjs). The lint rule built from the table
// refuses an import against it, and the folder graph of the real sources has no cycle and no edge against it.
import path from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/traces';
import { CORE_LAYERS, coreGraph, cycles, mayImport, orderViolations, unplaced, type CoreGraph } from '../../scripts/core-order.mjs';

// Probe files do not exist, so the type-aware rules (which need a file in a tsconfig) are off here; the
// import rules are syntactic. `typed` below reads the real config to show those rules are on for src/.
const TYPED_RULES = ['@typescript-eslint/no-floating-promises', '@typescript-eslint/no-misused-promises'] as const;
const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } }, rules: Object.fromEntries(TYPED_RULES.map((r) => [r, 'off'])) },
});
const typed = new ESLint({ cwd: repoRoot });

/** Lints `code` as if it were the file `file` (relative to the repo; it need not exist). */
async function lint(file: string, code: string): Promise<Linter.LintMessage[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  return result?.messages ?? [];
}

const restricted = (messages: Linter.LintMessage[]) => messages.filter((m) => m.ruleId === 'no-restricted-imports');

describe('the import-order lint rule', () => {
  it('refuses an import of a later folder, naming both folders; type-only imports count', async () => {
    const messages = await lint('src/core/http/probe.ts', "import type { HubLink } from '../hub/link';\nexport type Probe = HubLink;\n");
    const refused = restricted(messages);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.messageId).toBe('patternWithCustomMessage');
    expect(refused[0]?.message).toContain('src/core/http/');
    expect(refused[0]?.message).toContain('src/core/hub/');
  });

  it('refuses a later folder of the same layer and a re-export from a later folder', async () => {
    const sameLayer = restricted(await lint('src/core/engine-client/probe.ts', "export { Scheduler } from '../scheduler/scheduler';\n"));
    expect(sameLayer.map((m) => m.messageId)).toEqual(['patternWithCustomMessage']);
    expect(sameLayer[0]?.message).toContain('src/core/scheduler/');
  });

  it('accepts imports of earlier folders, of the same folder and of src/shared', async () => {
    const code = [
      "import type { Logger } from '../base/log';",
      "import { endpointKey } from '../engine-client/url';",
      "import type { ModelRegistry } from '../models/registry';",
      "import { HubLink } from './link';",
      "import type { ModelState } from '../../shared/types';",
      "import type { SnapshotEvent } from '../../shared/bridge/events';",
      'export type Probe = [Logger, typeof endpointKey, ModelRegistry, HubLink, ModelState, SnapshotEvent];',
    ].join('\n');
    expect(restricted(await lint('src/core/hub/probe.ts', `${code}\n`))).toEqual([]);
  });

  it('keeps the layer rule inside every folder block: electron and the UI layers are still refused', async () => {
    const electron = restricted(await lint('src/core/hub/probe.ts', "import { app } from 'electron';\nexport const probe = app;\n"));
    expect(electron.map((m) => m.messageId)).toEqual(['pathWithCustomMessage']);
    const ui = restricted(await lint('src/core/base/probe.ts', "import { x } from '../../renderer/x';\nexport const probe = x;\n"));
    expect(ui.map((m) => m.messageId)).toEqual(['patternWithCustomMessage']);
  });
});

describe('the other lint rules the design relies on', () => {
  it('IPC has one door a side: ipcMain and ipcRenderer are refused outside src/main/ipc.ts and src/preload/index.ts', async () => {
    const code = "import { ipcMain, ipcRenderer } from 'electron';\nexport const probe = [ipcMain, ipcRenderer];\n";
    expect(restricted(await lint('src/main/probe.ts', code)).map((m) => m.messageId)).toEqual(['importNameWithCustomMessage', 'importNameWithCustomMessage']);
    expect(restricted(await lint('src/preload/probe.ts', code))).toHaveLength(2);
    expect(restricted(await lint('src/main/ipc.ts', code))).toEqual([]);
    expect(restricted(await lint('src/main/probe.ts', "import { app } from 'electron';\nexport const probe = app;\n"))).toEqual([]);
  });

  it('a promise nobody awaits and an async callback where a void one is expected fail lint in every layer of src/', async () => {
    for (const file of ['src/core/agent.ts', 'src/cli/main.ts', 'src/main/index.ts', 'src/renderer/App.tsx']) {
      const rules = ((await typed.calculateConfigForFile(path.join(repoRoot, file))) as Linter.Config).rules ?? {};
      for (const rule of TYPED_RULES) expect([file, rule, rules[rule]]).toEqual([file, rule, [2]]);
    }
  });
});

describe('the folder graph of src/core', () => {
  const graph = coreGraph(path.join(repoRoot, 'src/core'));

  it('is read from the real sources', () => {
    expect(graph.files).toBeGreaterThan(100);
    expect(graph.edges.some((e) => e.from === 'hub/' && e.to === 'protocol/')).toBe(true);
  });

  it('places every folder and root file in the order', () => {
    expect(unplaced(graph)).toEqual([]);
  });

  it('has no cycle', () => {
    expect(cycles(graph).map((c) => c.nodes.join(' '))).toEqual([]);
  });

  it('has no edge against the order (dynamic imports included, which lint does not see)', () => {
    expect(orderViolations(graph).map((e) => `${e.from} -> ${e.to}: ${e.files.join(', ')}`)).toEqual([]);
  });

  it('finds a cycle and an edge against the order where there is one', () => {
    const bad: CoreGraph = {
      files: 2,
      nodes: ['http/', 'hub/'],
      edges: [
        { from: 'hub/', to: 'http/', files: ['hub/a.ts -> http/b.ts'], typeOnly: false },
        { from: 'http/', to: 'hub/', files: ['http/b.ts -> hub/a.ts'], typeOnly: true },
      ],
    };
    expect(cycles(bad).map((c) => c.nodes)).toEqual([['http/', 'hub/']]);
    expect(orderViolations(bad).map((e) => `${e.from} -> ${e.to}`)).toEqual(['http/ -> hub/']);
  });

  it('orders every node once', () => {
    const all = CORE_LAYERS.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(mayImport('hub/', 'http/')).toBe(true);
    expect(mayImport('http/', 'hub/')).toBe(false);
  });
});
