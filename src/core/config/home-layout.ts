// The one place naming the files of the home folder (see home.ts for where the folder is and its modes).
// Everything that reads or writes a file in the home joins the home with a name from here.
import path from 'node:path';

export const HOME_FILES = {
  /** The agent's settings (TOML), written by `init` / first run. */
  config: 'config.toml',
  /** Hand-kept engine endpoints per model, beside config.toml. */
  models: 'models.json',
  /** The node key: raw 32-byte secp256k1 private key, as the Go computing-provider names it. */
  nodeKey: 'private_key',
  /** Our earlier Ed25519 node key, migrated once (kept as .bak). */
  legacyNodeKey: 'node-key.pem',
  /** Where the node key came from, for the Settings line. */
  identity: 'identity.json',
  /** The console's overlays on config.toml. */
  settings: 'settings.json',
  /** The provider key and other secrets when no OS keychain is used. */
  secrets: 'secrets.json',
  /** The desktop's secrets, encrypted with the OS keychain (Electron safeStorage). */
  keychainSecrets: 'secrets.keychain.json',
  /** The local gateway's API keys (hashes). */
  gatewayKeys: 'gateway-keys.json',
  /** The gateway's resume-token signing key. */
  gatewayResumeKey: 'gateway-resume.key',
  /** The usage ledger (SQLite). */
  ledger: 'ledger.sqlite',
  /** The folder of the agent's log. */
  logs: 'logs',
  /** The agent's JSON-lines log. */
  log: path.join('logs', 'agent.jsonl'),
  /** GPU metrics per minute for the last 7 days. */
  gpuHistory: 'gpu-history.jsonl',
  /** The last hub notices. */
  notices: 'notices.json',
  /** The folder of cached platform answers (rates, stats). */
  cache: 'cache',
  /** The console token kept by the service install (`run --console-token-file`). */
  consoleToken: 'console-token',
  /** Which hosts each provider key was approved for (key hashes and host:port pairs). */
  keyDestinations: 'key-destinations.json',
  /** Read-only fleet tokens other rigs' consoles use to read this one (hashes). */
  fleetTokens: 'fleet-tokens.json',
  /** The other rigs this console reads (addresses; their tokens are in the secret store). */
  fleet: 'fleet.json',
  /** What the hub said in its last register ack (registered models, upgrade advice), for doctor. */
  hubView: 'hub-view.json',
  /** Weight hashes (file-hashes.json, by path, size and mtime) and this node's manifests of served models. */
  weights: 'weights',
  /** Models downloaded from the Swan model repository, one folder per model id with its `.swan-hash-manifest.json` (SWAN_MODELS_DIR moves it). */
  modelFiles: 'models',
  /** Space kept for the ledger: released when the disk fills, so held usage rows are still written (ledger/space-reserve.ts). */
  ledgerReserve: 'ledger.reserve',
  /** The lock of the agent running on this home (a folder, proper-lockfile's), and who holds it. */
  agentLock: 'agent.lock',
  agentInfo: 'agent.json',
  /** The engines the owner asked this agent to run (`models serve`, the console): what should run. */
  managedEngines: 'managed-engines.json',
  /** The engines the agent started (pid, port, binary): what it may stop, and nothing else. */
  managedState: 'managed-state.json',
  /** Requests for a new one-time console link from `swan-provider link`, and the running agent's answers (0700). */
  consoleLinks: 'console-links',
  /** Release files downloaded and verified against their SHA256SUMS, waiting to be installed (0700, files 0600). */
  updates: 'updates',
} as const;

export type HomeFile = keyof typeof HOME_FILES;

/** The path of one of the home folder's files. */
export function homePath(home: string, file: HomeFile): string {
  return path.join(home, HOME_FILES[file]);
}

/** The secret-store key under which the provider key (the hub's API key) is kept. */
export const KEY_SECRET = 'providerKey';
