// Before the specs: the console they load (out/renderer) is built and no older than its sources. `npm install`
// built it (prepare), so in a fresh install this does nothing; after an edit it rebuilds once, as
// `swan-provider run --console` would.
import { ensureConsoleUi } from '../src/cli/console-ui';

export default async function globalSetup(): Promise<void> {
  const why = await ensureConsoleUi((line) => process.stdout.write(`${line}\n`));
  if (why) throw new Error(why);
}
