// The `models` subcommands of the fetch side (recommend, catalog, download), declared here and loaded only when
// run (their modules read GGUF headers and hash files; `swan-provider --help` should not load them).
import { InvalidArgumentError, type Command } from 'commander';

interface Opts {
  home: string;
  serviceUrl?: string;
  modelsDir?: string;
}

function positive(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

/** Adds recommend, catalog and download to the `models` command group (serve, stop and ps live beside them). */
export function addModelsFetchCommands(models: Command, withHome: (c: Command) => Command): void {
  const common = (c: Command) =>
    withHome(c)
      .option('--service-url <url>', "the network API (default: the home's ServiceURL, else mainnet's)")
      .option('--models-dir <dir>', 'the models folder (default: SWAN_MODELS_DIR, else <home>/models)');
  common(models.command('recommend'))
    .description("what this GPU should serve: the network's models with demand, estimated earnings here and whether each fits (fits | too_large | unknown)")
    .option('--json', 'print JSON')
    .option('--vram-gb <n>', 'plan for this much GPU memory (GiB) instead of what the GPUs report', positive)
    .option('--slots <n>', 'sequences served at once (the KV cache grows with it; default 1)', positive)
    .option('--context <tokens>', 'tokens per slot (default: what the network asks of each model)', positive)
    .action(async (o: Opts & { json?: boolean; vramGb?: number; slots?: number; context?: number }) => {
      const { recommendCommand } = await import('./models-fetch-command');
      process.exitCode = await recommendCommand({ ...o, json: o.json === true });
    });
  common(models.command('catalog'))
    .description("the Swan model repository's models, and which are in the models folder")
    .option('--json', 'print JSON')
    .action(async (o: Opts & { json?: boolean }) => {
      const { catalogCommand } = await import('./models-fetch-command');
      process.exitCode = await catalogCommand({ ...o, json: o.json === true });
    });
  common(models.command('download'))
    .description(
      'fetch a model from the Swan model repository, each file checked against its sha256, resumable; writes the hash manifest fingerprint challenges are answered from',
    )
    .argument('<id>', 'the model id (as "models catalog" lists it)')
    .option('--json', 'print the result as JSON')
    .option('--hf <repo>', "fetch from this Hugging Face repository (org/name; HF_ENDPOINT, HF_TOKEN as the Hub's own tools read them) into the folder of <id>")
    .option('--include <pattern...>', 'with --hf: only these files (e.g. "*Q4_K_M.gguf")')
    .option('--revision <rev>', 'with --hf: a branch, tag or commit (default main)')
    .action(async (id: string, o: Opts & { json?: boolean; hf?: string; include?: string[]; revision?: string }) => {
      const { downloadCommand } = await import('./models-fetch-command');
      process.exitCode = await downloadCommand({ ...o, modelId: id, json: o.json === true });
    });
}
