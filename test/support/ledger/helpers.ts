// Shared by the ledger tests: temp folders, records, and waiting for the ledger's health events.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { UsageRecord } from '../../../src/shared/types';
import type { Ledger, LedgerHealth } from '../../../src/core/ledger/ledger';

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-ledger-test-'));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

let seq = 0;

/** A successful hub request finishing at `finishedAt`, overridable field by field. */
export function rec(finishedAt: number, over: Partial<UsageRecord> = {}): UsageRecord {
  seq++;
  const latencyMs = over.latencyMs ?? 1000;
  return {
    requestId: `req-${seq}`,
    source: 'hub',
    model: 'llama-3.1-8b',
    endpoint: 'http://127.0.0.1:8000',
    startedAt: Math.max(0, finishedAt - latencyMs),
    finishedAt,
    tokensIn: 100,
    tokensOut: 50,
    estimated: false,
    latencyMs,
    ttftMs: 120,
    tokensPerSecond: 50,
    status: 'ok',
    statusCode: 200,
    error: null,
    ...over,
  };
}

/** Resolves with the first health (now or from a 'health' event) that satisfies `pred`. */
export function waitForHealth(ledger: Ledger, pred: (h: LedgerHealth) => boolean, timeoutMs = 5000): Promise<LedgerHealth> {
  const now = ledger.health();
  if (pred(now)) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const onHealth = (h: LedgerHealth): void => {
      if (!pred(h)) return;
      clearTimeout(timer);
      ledger.off('health', onHealth);
      resolve(h);
    };
    const timer = setTimeout(() => {
      ledger.off('health', onHealth);
      reject(new Error(`ledger health never matched; last: ${JSON.stringify(ledger.health())}`));
    }, timeoutMs);
    ledger.on('health', onHealth);
  });
}

/** A minimal RFC 4180 reader (quoted fields, doubled quotes, CRLF), to check our writer from outside. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error('CSV does not end with CRLF');
  return rows;
}
