// Child process of crash.test.ts: writes a burst of usage records and prints each record's id on
// stdout only after record() has returned. The test SIGKILLs it mid-burst.
// Usage: node --import tsx test/support/ledger/crash-writer.ts <ledger file>
import { Ledger } from '../../../src/core/ledger/ledger';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: crash-writer.ts <ledger file>\n');
  process.exit(2);
}
const ledger = Ledger.open(file);
if (!ledger.health().ok) {
  process.stderr.write(`ledger not ok: ${JSON.stringify(ledger.health())}\n`);
  process.exit(3);
}
const deadline = Date.now() + 20_000; // never outlive a stuck test
for (let i = 0; Date.now() < deadline; i++) {
  const id = `crash-${process.pid}-${i}`;
  const t = Date.now();
  ledger.record({
    requestId: id,
    source: 'hub',
    model: i % 2 ? 'model-a' : 'model-b',
    endpoint: 'http://127.0.0.1:8000',
    startedAt: t - 250,
    finishedAt: t,
    tokensIn: 100 + (i % 50),
    tokensOut: 40 + (i % 30),
    estimated: false,
    latencyMs: 250,
    ttftMs: 30,
    tokensPerSecond: 160,
    status: 'ok',
    statusCode: 200,
    error: null,
  });
  // Pipes are written synchronously on Linux, so the id is out before the next record starts.
  process.stdout.write(`${id}\n`);
}
ledger.close();
