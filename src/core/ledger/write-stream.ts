// The little of a Node Writable that CSV export needs, and waiting for it to drain without hanging
// when the stream fails or closes instead.
import type { EventEmitter } from 'node:events';

export interface WritableLike extends EventEmitter {
  write(chunk: string): boolean;
  readonly destroyed?: boolean;
}

export function waitForDrain(stream: WritableLike): Promise<void> {
  if (stream.destroyed) return Promise.reject(new Error('The output stream was closed before the export finished.'));
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
    const onClose = (): void => done(new Error('The output stream was closed before the export finished.'));
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
