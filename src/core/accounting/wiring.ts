// Each finished request is earned (its energy, whether the hub still has to hear of it), queued for the
// ledger and logged; each GPU sample feeds the energy meter.
import type { GpuSample } from '../../shared/types';
import type { GpuSampler } from '../gpu/sampler';
import type { Ledger } from '../ledger/ledger';
import type { RequestBook } from '../inference/requests';
import type { EarningsService } from './earnings';
import type { LedgerBatch } from './ledger-batch';
import type { RequestLines } from './request-log';

export interface AccountingParts {
  book: RequestBook;
  sampler: GpuSampler | undefined;
  earnings: EarningsService;
  batch: LedgerBatch;
  requestLines: RequestLines;
  ledger: Ledger | undefined;
}

export function wireAccounting(p: AccountingParts, changed: () => void): void {
  p.book.on('update', (request) => p.earnings.onRequestUpdate(request));
  p.book.on('finished', (record, view) => {
    p.earnings.onFinished(record);
    // The owner's own test prompt is not usage: not counted today, not in the ledger (it stays in Requests).
    if (view.purpose !== 'try') p.batch.queue(record);
    // The amount its row is written with, beside the request in the console.
    if (p.ledger) p.book.setEarnings(record.requestId, p.ledger.earningOf(record));
    // After the ledger's queue: the lines of one turn are written after its finals leave (request-log.ts).
    p.requestLines.finished(record);
    changed();
  });
  p.sampler?.on('sample', (sample: GpuSample) => p.earnings.onSample(sample));
}
