// The provider's identity, as the Go computing-provider makes it (GenerateNodeID in
// internal/computing/provider.go): a raw 32-byte secp256k1 private key in a file named private_key,
// and node_id = the hex of the uncompressed public key (130 chars, "04…"). Where it comes from, in order:
//   1. <home>/private_key: ours (written 0600; the same raw format, so it can be copied either way);
//   2. the Go provider's key, $CP_PATH/private_key (default ~/.swan/computing/private_key): an owner
//      moving from the Go provider keeps the node the hub knows. It is copied into the home folder;
//   3. our earlier Ed25519 key (node-key.pem): migrated once to a secp256k1 key derived from it
//      (the same old key always gives the same new one), the old file kept as node-key.pem.bak;
//   4. otherwise a new random key.
// <home>/identity.json remembers which, for the console's Settings line.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HOME_FILES } from './home-layout';
import { DIR_MODE } from './home';
import { writeFileAtomic } from './atomic-file';
import { CodedError } from '../../shared/bridge-error';

export type IdentitySource = 'generated' | 'computing-provider' | 'migrated' | 'home';

export interface Identity {
  /** Uncompressed secp256k1 public key, hex: "04" + 128 hex chars. */
  nodeId: string;
  /** The raw 32-byte private key. */
  privateKey: Buffer;
  /** The key file in use. */
  file: string;
  source: IdentitySource;
  /** For a reused or migrated key: the file it came from. */
  from?: string;
  /** What happened while loading, for the log (reuse, migration). */
  notes: string[];
}

/** Why a node key was refused: unreadable, not 32 raw bytes or 64 hex characters, outside the curve's range, or an old key that cannot be migrated. */
export type IdentityErrorCode = 'key_unreadable' | 'key_malformed' | 'key_invalid' | 'key_not_migratable';

/** A node key file that cannot be used; `file` is that file. It is never replaced: the hub would see a new node. */
export class IdentityError extends CodedError<IdentityErrorCode> {
  override name = 'IdentityError';
  constructor(
    code: IdentityErrorCode,
    readonly file: string,
    message: string,
  ) {
    super(code, message);
  }
}

export const KEY_FILE = HOME_FILES.nodeKey;
const ORIGIN_FILE = HOME_FILES.identity;
const LEGACY_FILE = HOME_FILES.legacyNodeKey;

function nodeIdOf(raw: Buffer): string {
  const ecdh = crypto.createECDH('secp256k1');
  ecdh.setPrivateKey(raw);
  return ecdh.getPublicKey('hex', 'uncompressed');
}

/** 0 < key < the curve order (setPrivateKey refuses anything else). */
function validKey(raw: Buffer): boolean {
  try {
    nodeIdOf(raw);
    return true;
  } catch {
    return false;
  }
}

/** Raw 32 bytes (the Go form) or 64 hex characters (optionally 0x…); anything else is refused. */
function parseKey(buf: Buffer, file: string): Buffer {
  let raw: Buffer | undefined;
  if (buf.length === 32) raw = buf;
  else {
    const text = buf.toString('utf8').trim().replace(/^0x/i, '');
    if (/^[0-9a-fA-F]{64}$/.test(text)) raw = Buffer.from(text, 'hex');
  }
  const restore = 'Restore it from a backup; deleting it makes a new key, and the hub will see this machine as a different node.';
  if (!raw)
    throw new IdentityError(
      'key_malformed',
      file,
      `The node key ${file} is not a secp256k1 private key (expected 32 raw bytes or 64 hex characters, found ${buf.length} bytes). ${restore}`,
    );
  if (!validKey(raw)) throw new IdentityError('key_invalid', file, `The node key ${file} is not a valid secp256k1 private key. ${restore}`);
  return raw;
}

function readKeyFile(file: string): Buffer {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new IdentityError(
      'key_unreadable',
      file,
      `The node key ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}). Check its permissions.`,
    );
  }
  return parseKey(buf, file);
}

/** The Go provider's key file: $CP_PATH/private_key, else ~/.swan/computing/private_key (when a home is known). */
export function goProviderKeyPath(env: NodeJS.ProcessEnv): string | undefined {
  const userHome = env.HOME || env.USERPROFILE;
  const expand = (p: string): string => (p.startsWith('~') && userHome ? path.join(userHome, p.slice(1)) : p);
  if (env.CP_PATH) return path.join(expand(env.CP_PATH), KEY_FILE);
  return userHome ? path.join(userHome, '.swan', 'computing', KEY_FILE) : undefined;
}

/** A secp256k1 key derived from the old Ed25519 key: the migration gives the same node every time. */
function deriveFromEd25519(pem: string, file: string): Buffer {
  let der: Buffer;
  try {
    const key = crypto.createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`a ${key.asymmetricKeyType ?? 'unknown'} key`);
    der = key.export({ type: 'pkcs8', format: 'der' });
  } catch (e) {
    throw new IdentityError(
      'key_not_migratable',
      file,
      `The old node key ${file} cannot be migrated (${(e as Error).message}). Restore it from a backup, or move it away to start with a new node.`,
    );
  }
  for (let i = 0; ; i++) {
    const raw = crypto.createHash('sha256').update(`swan-provider node key v2 (from ed25519) #${i}\n`).update(der).digest();
    if (validKey(raw)) return raw; // else out of the curve's range (odds 2^-128): the next counter value
  }
}

function writeKey(file: string, raw: Buffer): boolean {
  try {
    fs.writeFileSync(file, raw, { mode: 0o600, flag: 'wx' });
    return true;
  } catch {
    return false; // another process made it meanwhile: theirs is read below
  }
}

function readOrigin(home: string): { source: IdentitySource; from?: string } {
  try {
    const o = JSON.parse(fs.readFileSync(path.join(home, ORIGIN_FILE), 'utf8')) as { source?: unknown; from?: unknown };
    const sources: IdentitySource[] = ['generated', 'computing-provider', 'migrated'];
    if (sources.includes(o.source as IdentitySource)) return { source: o.source as IdentitySource, ...(typeof o.from === 'string' ? { from: o.from } : {}) };
  } catch {
    // no record (a key copied in by hand): "this app's key file"
  }
  return { source: 'home' };
}

function writeOrigin(home: string, source: IdentitySource, from?: string): void {
  try {
    writeFileAtomic(path.join(home, ORIGIN_FILE), `${JSON.stringify({ source, ...(from ? { from } : {}), at: new Date().toISOString() })}\n`);
  } catch {
    // only the Settings line depends on it
  }
}

export function loadOrCreateIdentity(home: string, env: NodeJS.ProcessEnv = process.env): Identity {
  fs.mkdirSync(home, { recursive: true, mode: DIR_MODE });
  const file = path.join(home, KEY_FILE);
  const legacy = path.join(home, LEGACY_FILE);
  const notes: string[] = [];
  const retireLegacy = (): void => {
    if (!fs.existsSync(legacy)) return;
    fs.renameSync(legacy, `${legacy}.bak`);
    notes.push(`the old Ed25519 node key was kept as ${legacy}.bak`);
  };
  if (!fs.existsSync(file)) {
    const goKey = goProviderKeyPath(env);
    let made: { raw: Buffer; source: IdentitySource; from?: string };
    if (goKey && fs.existsSync(goKey)) {
      made = { raw: readKeyFile(goKey), source: 'computing-provider', from: goKey };
    } else if (fs.existsSync(legacy)) {
      made = { raw: deriveFromEd25519(fs.readFileSync(legacy, 'utf8'), legacy), source: 'migrated', from: `${legacy}.bak` };
    } else {
      made = { raw: crypto.randomBytes(32), source: 'generated' };
      while (!validKey(made.raw)) made.raw = crypto.randomBytes(32);
    }
    if (writeKey(file, made.raw)) {
      writeOrigin(home, made.source, made.from);
      const id = nodeIdOf(made.raw);
      if (made.source === 'computing-provider')
        notes.push(`reusing the Go computing-provider's node key from ${made.from} (node ${id.slice(0, 18)}…); copied to ${file}`);
      if (made.source === 'migrated') notes.push(`migrated the Ed25519 node key to secp256k1 (the hub's form): new node ${id.slice(0, 18)}…`);
      if (made.source === 'generated') notes.push(`made a new node key ${file} (node ${id.slice(0, 18)}…)`);
      retireLegacy();
    }
  }
  const raw = readKeyFile(file);
  // A private key readable by others (copied in by hand, an old install) is made owner-only again.
  if (process.platform !== 'win32' && (fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  return { nodeId: nodeIdOf(raw), privateKey: raw, file, ...readOrigin(home), notes };
}
