// The one stand-in for the Agent behind a bridge transport (Electron IPC guard, preload, console
// WebSocket): it implements BridgeBackend from src/shared/bridge/transport.ts, answers each channel from a table
// typed by InvokeArgs / InvokeResults (a wrong answer shape is a compile error), records every call that
// reached it, and pushes events to its subscribers. A channel with no answer rejects, as the Agent does
// for a call it cannot serve, so a test never passes on a value it did not set up.
import type { BridgeBackend } from '../../src/shared/bridge/transport';
import type { InvokeChannel, InvokeResults } from '../../src/shared/bridge/channels';
import type { InvokeArgs } from '../../src/shared/bridge/schemas';
import type { BridgeEvent } from '../../src/shared/bridge/events';

export type Answers = { [C in InvokeChannel]?: (args: InvokeArgs<C>) => InvokeResults[C] | Promise<InvokeResults[C]> };

export interface BackendCall {
  channel: string;
  args: unknown;
}

export class StandInBackend implements BridgeBackend {
  readonly calls: BackendCall[] = [];
  private readonly listeners = new Set<(event: BridgeEvent) => void>();

  constructor(private readonly answers: Answers = {}) {}

  async invoke(channel: string, args: unknown): Promise<unknown> {
    this.calls.push({ channel, args });
    const answer = (this.answers as Record<string, ((args: unknown) => unknown) | undefined>)[channel];
    if (!answer) throw new Error(`no answer for ${channel}`);
    return answer(args);
  }

  subscribe(cb: (event: BridgeEvent) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  emit(event: BridgeEvent): void {
    for (const l of this.listeners) l(event);
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}
