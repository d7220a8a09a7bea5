// The little of a Node Writable that CSV export needs, and waiting for it to drain without hanging
// when the stream fails or closes instead.
import type { EventEmitter } from 'node:events';
import { CodedError } from '../../shared/bridge-error';

export interface WritableLike extends EventEmitter {
  write(chunk: string): boolean;
  readonly destroyed?: boolean;
}

/** Why an export stopped early: its output was closed under it (the stream's own errors are passed on as they are). */
export type OutputErrorCode = 'output_closed';

export class OutputError extends CodedError<OutputErrorCode> {
  override name = 'OutputError';
}

const closedEarly = (): OutputError => new OutputError('output_closed', 'The output stream was closed before the export finished.');

export function waitForDrain(stream: WritableLike): Promise<void> {
  if (stream.destroyed) return Promise.reject(closedEarly());
  return new Promise((resolve, reject) => {
    const done = (err?: Error): void => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = (): void => done();
    const onError = (err: Error): void => done(err);
    const onClose = (): void => done(closedEarly());
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
