// `swan-provider`: the headless entry. Each command lives in its own module; this file only parses.
import { Command, InvalidArgumentError, Option } from 'commander';
import { AGENT_VERSION } from '../core/agent';
import { defaultHome, engineAddress } from './home';
import { fmtDate } from '../shared/dates';
import { addModelsFetchCommands } from './models-fetch-program';

/** --host values: a base URL or a bare HOST:PORT (http). */
function hostArg(value: string, previous: string[] | undefined): string[] {
  try {
    return [...(previous ?? []), engineAddress(value)];
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** Every command takes --home; without it, SWAN_HOME, else the OS app-data folder (one rule everywhere). */
function withHome(cmd: Command): Command {
  return cmd.addOption(
    new Option('--home <dir>', 'the agent home folder (config, identity key, ledger, logs, settings)').default(
      defaultHome(),
      'SWAN_HOME, else the OS app-data folder',
    ),
  );
}

/** Every command and option; `main` parses with it, tests walk it (README table, --home everywhere). */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('swan-provider')
    .description('Swan Provider Console: serve your GPU on the Swan Inference network (headless agent, dev hub and tools).')
    .version(AGENT_VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run "swan-provider --help" for the commands)');
  // Usage errors (unknown flag, bad value) exit 2, like a bad config; failed checks exit 1.
  program.exitOverride((err) => {
    process.exit(err.exitCode === 0 || err.code === 'commander.version' || err.code === 'commander.helpDisplayed' ? 0 : 2);
  });

  withHome(program.command('run'))
    .description('run the provider agent headless')
    .option('--config <path>', 'computing-provider config.toml (models.json beside it)')
    .option('--console <host:port>', 'serve the browser console (e.g. 127.0.0.1:7777)')
    .option('--console-token-file <path>', 'keep the console token in this file (0600, created when missing) so the console URL stays the same')
    .option('--init-if-missing', 'first run: write a default config.toml in the home folder when there is none (the console then asks for the key)')
    .option('--metrics', 'with --console: also serve /metrics in Prometheus format (needs the console token)')
    .option('--console-allow-host <name...>', 'with --console on 0.0.0.0: extra host names the console answers to (e.g. gpu-box.lan)')
    .option('--no-discovery', 'do not probe local engine ports')
    .option('--quiet', 'only warnings and errors on the terminal')
    .action(async (o) => {
      const { runCommand } = await import('./run');
      process.exitCode = await runCommand(o);
    });

  withHome(program.command('dev-hub'))
    .description('run a reference Swan Inference hub for development (OpenAI API on HTTP, providers on /ws)')
    .option('--port <n>', 'port to listen on (0 = any free port)', '8081')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--token <key>', 'the provider key the hub accepts (default: any)')
    .option('--pending-token <key>', 'a key the status API reports as pending review, with next steps (to try onboarding)')
    .option('--no-earnings', 'report earnings as not enabled for providers (to try the "not earning" path)')
    .option('--repository <dir>', 'serve this folder as the Swan model repository (<dir>/<org>/<name>/<files>), so models download verified from the dev hub')
    .option('--repository-rate <bytes>', "hold the repository's downloads to this many bytes a second (a slow network, to watch one run)")
    .action(async (o) => {
      const { devHubCommand } = await import('./dev-hub-command');
      process.exitCode = await devHubCommand(o);
    });

  withHome(program.command('doctor'))
    .description('check the config, the key, the hub and the engines, and say what to fix')
    .option('--config <path>', 'config.toml to check')
    .option('--json', 'print the verdict (with its stable codes) and every check as one JSON object')
    .action(async (o) => {
      const { doctorCommand } = await import('./doctor');
      process.exitCode = await doctorCommand(o);
    });

  withHome(program.command('init'))
    .description('write a commented config.toml and models.json in the home folder, filled with what can be detected')
    .option('--dir <dir>', 'write them here instead of the home folder')
    .addOption(new Option('--network <name>', 'the Swan Inference network to connect to').choices(['mainnet', 'testnet', 'local']).default('mainnet'))
    .option('--host <host:port...>', 'also look for engines at these addresses (written to EngineHosts)', hostArg)
    .option('--force', 'overwrite existing files')
    .action(async (o) => {
      const { initCommand } = await import('./init');
      process.exitCode = await initCommand(o);
    });

  withHome(program.command('engines'))
    .description('find local inference engines (vLLM, SGLang, Ollama, llama.cpp, LM Studio, TGI) and list their models')
    .option('--json', 'print JSON')
    .option('--host <host:port...>', 'also probe these addresses (HOST:PORT or a base URL)', hostArg)
    .action(async (o: { json?: boolean; host?: string[]; home: string }) => {
      const { enginesCommand, homeEngineHosts } = await import('./engines-command');
      process.exitCode = await enginesCommand({ json: o.json === true, hosts: [...homeEngineHosts(o.home), ...(o.host ?? [])] });
    });

  const models = program
    .command('models')
    .description('models: what this GPU should serve (recommend), fetch it verified (catalog, download), run an engine for it (serve, stop, ps)');
  withHome(models.command('serve'))
    .description('run an engine for a model under its catalogue id (recorded in the home: the agent starts it now, or when it starts)')
    .argument('<id>', 'the catalogue id to announce it under (e.g. meta-llama/Llama-3.1-8B-Instruct)')
    .argument('[passthrough...]', 'flags for the engine itself, after --')
    .option('--backend <name>', 'llamacpp (a process), vllm or sglang (Docker containers)', 'llamacpp')
    .option('--weights <path>', 'the GGUF file (llama.cpp) or the model folder (vLLM, SGLang)')
    .option('--gpus <list>', 'all, none, or device numbers such as 0,1')
    .option('--context-length <n>', 'the context window of one request')
    .option('--slots <n>', 'requests served at once (llama.cpp -np)')
    .option('--port <n>', 'the port on 127.0.0.1 (default: a free one)')
    .option('--llama-server <path>', 'the llama-server to run (default: [Agent] LlamaServer, else the one on PATH)')
    .option('--image <image>', 'the container image (vLLM, SGLang)')
    .option('--wait <seconds>', 'with a running agent: follow it until the engine answers (0: do not wait)', '120')
    .option('--dry-run', 'print the command that would run, and change nothing')
    .action(async (id: string, passthrough: string[], o: Record<string, string | boolean | undefined> & { home: string }) => {
      const { modelsServeCommand } = await import('./models-run-command');
      process.exitCode = await modelsServeCommand({ ...(o as object), home: o.home, id, passthrough, dryRun: o.dryRun === true });
    });
  withHome(models.command('stop'))
    .description('stop an engine the agent runs for you, and stop announcing its model (engines it did not start are left alone)')
    .argument('<id>')
    .action(async (id: string, o: { home: string }) => {
      const { modelsStopCommand } = await import('./models-run-command');
      process.exitCode = await modelsStopCommand({ home: o.home, id });
    });
  withHome(models.command('ps'))
    .description('the engines the agent runs for you, and how each is doing')
    .option('--json', 'print JSON')
    .action(async (o: { home: string; json?: boolean }) => {
      const { modelsPsCommand } = await import('./models-run-command');
      process.exitCode = modelsPsCommand({ home: o.home, json: o.json === true });
    });

  const usage = program.command('usage').description('usage and earnings from the ledger');
  withHome(usage.command('summary', { isDefault: true }))
    .description('today / 7 days / 30 days totals, per model')
    .option('--fleet', "every rig on the Fleet page: each rig's ledger (read over its fleet API) and the sums")
    .option('--json', 'with --fleet: print JSON')
    .action(async (o: { home: string; fleet?: boolean; json?: boolean }) => {
      if (o.fleet) {
        const { usageFleetCommand } = await import('./usage-fleet');
        process.exitCode = await usageFleetCommand({ home: o.home, json: o.json === true });
        return;
      }
      const { usageCommand } = await import('./usage-command');
      process.exitCode = await usageCommand({ home: o.home, action: 'summary' });
    });
  withHome(usage.command('export'))
    .description('export finished requests as CSV')
    .option('--from <date>', 'first day (YYYY-MM-DD or ISO time)')
    .option('--to <date>', 'last day (YYYY-MM-DD or ISO time)')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (o: { home: string; from?: string; to?: string; out?: string }) => {
      const { usageCommand } = await import('./usage-command');
      process.exitCode = await usageCommand({ ...o, action: 'export' });
    });

  const keys = program.command('keys').description('API keys of the local gateway');
  withHome(keys.command('create'))
    .description('create a key (printed once; only its hash is kept)')
    .option('--name <name>', 'a name to tell keys apart', `key-${fmtDate(Date.now())}`)
    .action(async (o: { home: string; name: string }) => {
      const { keysCommand } = await import('./keys-command');
      process.exitCode = keysCommand({ home: o.home, action: 'create', name: o.name });
    });
  withHome(keys.command('list'))
    .description('list keys')
    .action(async (o: { home: string }) => {
      const { keysCommand } = await import('./keys-command');
      process.exitCode = keysCommand({ home: o.home, action: 'list' });
    });
  withHome(keys.command('revoke'))
    .description('revoke a key by name')
    .argument('<name>')
    .action(async (name: string, o: { home: string }) => {
      const { keysCommand } = await import('./keys-command');
      process.exitCode = keysCommand({ home: o.home, action: 'revoke', name });
    });

  withHome(program.command('approve'))
    .description(
      'approve (or deny) a change the running agent holds for you: the provider key to a new server, a gateway key, an outside engine; no CODE lists them',
    )
    .argument('[code]', 'the code the console or the agent showed (ABCD-EFGH)')
    .option('--deny', 'deny it instead')
    .option('--yes', 'approve without the question (scripts)')
    .action(async (code: string | undefined, o: { home: string; deny?: boolean; yes?: boolean }) => {
      const { approveCommand } = await import('./approve');
      process.exitCode = await approveCommand({ ...o, ...(code ? { code } : {}) });
    });

  withHome(program.command('link'))
    .description('print a new one-time console link, asked of the agent running in this home (no terminal needed)')
    .action(async (o: { home: string }) => {
      const { linkCommand } = await import('./console-link');
      process.exitCode = await linkCommand(o);
    });

  withHome(program.command('update'))
    .description(
      "the release channel: --check says whether a newer version exists; without it, download it, check it against the release's SHA256SUMS and print the command that installs it",
    )
    .option('--check', 'only check (exit 0: newest, 100: a newer version is available, 1: the check failed)')
    .option('--json', 'print the result (with its stable codes) as one JSON object')
    .option('--feed <url>', 'another release channel: a GitHub API repository URL (…/repos/OWNER/REPO)')
    .option(
      '--wait <seconds>',
      'with an agent running on this home: how long to hold the update for its requests in flight (exit 3 when they are still running)',
      '600',
    )
    .action(async (o) => {
      const { updateCommand } = await import('./update-command');
      process.exitCode = await updateCommand(o);
    });

  withHome(program.command('demo'))
    .description('dev hub + agent + a clearly labelled simulated engine + the browser console, all on this machine')
    .option('--console <host:port>', 'where to serve the console', '127.0.0.1:7777')
    .action(async (o) => {
      const { demoCommand } = await import('./demo');
      process.exitCode = await demoCommand(o);
    });

  addModelsFetchCommands(models, withHome);

  const fleet = program.command('fleet').description('many rigs in one console: the tokens other consoles read this rig with');
  const fleetToken = fleet.command('token').description('read-only fleet tokens for this rig');
  withHome(fleetToken.command('create'))
    .description('make a read-only token another console reads this rig with (printed once; only its hash is kept)')
    .option('--name <name>', 'a name to tell tokens apart (letters, digits, dot, dash, underscore)', `fleet-${fmtDate(Date.now())}`)
    .action(async (o: { home: string; name: string }) => {
      const { fleetTokenCommand } = await import('./fleet-command');
      process.exitCode = fleetTokenCommand({ home: o.home, action: 'create', name: o.name });
    });
  withHome(fleetToken.command('list'))
    .description("list this rig's fleet tokens")
    .action(async (o: { home: string }) => {
      const { fleetTokenCommand } = await import('./fleet-command');
      process.exitCode = fleetTokenCommand({ home: o.home, action: 'list' });
    });
  withHome(fleetToken.command('revoke'))
    .description('revoke a fleet token by name (it stops working at once)')
    .argument('<name>')
    .action(async (name: string, o: { home: string }) => {
      const { fleetTokenCommand } = await import('./fleet-command');
      process.exitCode = fleetTokenCommand({ home: o.home, action: 'revoke', name });
    });

  const account = program
    .command('account')
    .description('payout and activation on the platform: where the provider stands, its addresses, approval, collateral');
  withHome(account.command('show', { isDefault: true }))
    .description('where the provider stands (pending → under review → approved → activating → active), its payout and owner addresses, the collateral chains')
    .option('--config <path>', 'config.toml to read the platform address and key from')
    .option('--json', 'print JSON')
    .action(async (o: { home: string; config?: string; json?: boolean }) => {
      const { accountCommand } = await import('./account-command');
      process.exitCode = await accountCommand({ ...o, action: 'show' });
    });
  withHome(account.command('set-beneficiary'))
    .description('set the payout address (the wallet earnings are paid to); it can be changed again')
    .argument('<address>', 'a wallet address (0x and 40 hex digits)')
    .option('--config <path>', 'config.toml to read the platform address and key from')
    .action(async (address: string, o: { home: string; config?: string }) => {
      const { accountCommand } = await import('./account-command');
      process.exitCode = await accountCommand({ ...o, action: 'set-beneficiary', address });
    });
  withHome(account.command('set-owner'))
    .description('set the owner address, once: the platform never changes it (asks you to type it again, or --yes)')
    .argument('<address>', 'a wallet address (0x and 40 hex digits)')
    .option('--config <path>', 'config.toml to read the platform address and key from')
    .option('--yes', 'set it without the question (scripts)')
    .action(async (address: string, o: { home: string; config?: string; yes?: boolean }) => {
      const { accountCommand } = await import('./account-command');
      process.exitCode = await accountCommand({ ...o, action: 'set-owner', address });
    });
  withHome(account.command('request-approval'))
    .description('ask the platform to approve this provider (it then reviews it; collateral follows)')
    .requiredOption('--hardware <text>', 'the hardware, e.g. "2x RTX 4090, 128 GB RAM"')
    .requiredOption('--email <address>', 'where the platform writes about the approval')
    .option('--name <name>', 'the provider name (default: the node name)')
    .option('--config <path>', 'config.toml to read the platform address and key from')
    .action(async (o: { home: string; config?: string; hardware: string; email: string; name?: string }) => {
      const { accountCommand } = await import('./account-command');
      process.exitCode = await accountCommand({ ...o, action: 'request-approval' });
    });
  withHome(account.command('collateral'))
    .description('the chains, contracts and minimum the collateral step takes')
    .option('--config <path>', 'config.toml to read the platform address and key from')
    .action(async (o: { home: string; config?: string }) => {
      const { accountCommand } = await import('./account-command');
      process.exitCode = await accountCommand({ ...o, action: 'collateral' });
    });

  const service = program.command('service').description('run the agent as a service');
  withHome(service.command('install'))
    .description('write a systemd user unit (Linux) that runs "swan-provider run" with the console on a fixed address')
    .option('--config <path>', 'config.toml the service uses')
    .option('--console <host:port>', 'where the service serves the browser console', '127.0.0.1:7777')
    .action(async (o) => {
      const { serviceInstallCommand } = await import('./service');
      process.exitCode = await serviceInstallCommand(o);
    });
  withHome(service.command('status'))
    .description('say whether the service unit is installed and running, and print its console URL')
    .action(async (o) => {
      const { serviceStatusCommand } = await import('./service');
      process.exitCode = await serviceStatusCommand(o);
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
