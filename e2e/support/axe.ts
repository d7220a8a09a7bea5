/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// axe-core (npm dev dependency) run inside the page: its source is evaluated through the DevTools
// protocol, which the page's CSP does not govern, so the console's strict CSP stays as it ships.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from '@playwright/test';

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string; failureSummary?: string }[];
}

/** Runs every axe rule (WCAG A/AA and best practices) on the page; returns the violations. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate<boolean>("typeof window.axe !== 'undefined'");
  if (!loaded) await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page (this file is compiled without the DOM library).
  return await page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target, html: n.html.slice(0, 200), failureSummary: n.failureSummary })),
  })))`);
}

/** One line per violation and node, for a failure message a developer can act on. */
export function describeViolations(where: string, vs: AxeViolation[]): string {
  return vs.map((v) => `${where}: ${v.id} (${v.impact}) ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')}  ${n.html}`).join('\n')}`).join('\n');
}
