// vLLM and SGLang as the Go provider runs them: containers through Docker's Engine API. The contract the
// supervisor uses; the Docker implementation is in docker.ts.
import type { Running } from './engine-process';
import type { ServeSpec } from './spec';

export interface ContainerEngines {
  /** Creates and starts the container for `spec`, publishing its port on 127.0.0.1:`port`. */
  start(spec: ServeSpec, o: { port: number; apiKey: string; line: (text: string) => void }): Promise<Running>;
}
