// A bridge verb's shape: its arguments are what the channel's schema parsed (checked once, in handlers.ts),
// its answer the channel's result. Each group of verbs (one file each) takes only the parts it uses.
import type { InvokeArgs } from '../../shared/bridge/schemas';
import type { InvokeChannel, InvokeResults } from '../../shared/bridge/channels';

export type Handler<C extends InvokeChannel> = (args: InvokeArgs<C>) => Promise<InvokeResults[C]> | InvokeResults[C];

/** The handlers of some channels. */
export type Verbs<K extends InvokeChannel> = { [C in K]: Handler<C> };
