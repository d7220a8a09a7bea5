// The provider's identity: an Ed25519 key pair made on first run and kept in the home folder
// (mode 0600). node_id is the hex of the raw public key, stable across restarts.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface Identity {
  nodeId: string;
  privateKey: crypto.KeyObject;
  file: string;
}

/** Reads the key file; a damaged or foreign key is refused with what happened and what to do. */
function readKey(file: string): crypto.KeyObject {
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(
      `The node key ${file} cannot be read (${(e as Error).message}). Restore it from a backup; ` +
        'deleting it makes a new key, and the hub will see this machine as a different node.',
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`The node key ${file} is a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519. Restore the original key file from a backup.`);
  }
  return key;
}

export function loadOrCreateIdentity(home: string): Identity {
  const file = path.join(home, 'node-key.pem');
  fs.mkdirSync(home, { recursive: true });
  let privateKey: crypto.KeyObject;
  if (fs.existsSync(file)) {
    privateKey = readKey(file);
    // A private key readable by others (copied in by hand, an old install) is made owner-only again.
    if (process.platform !== 'win32' && (fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  } else {
    const pair = crypto.generateKeyPairSync('ed25519');
    privateKey = pair.privateKey;
    // 'wx' fails if another process created it meanwhile; then read theirs.
    try {
      fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    } catch {
      privateKey = readKey(file);
    }
  }
  const spki = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  // The raw 32-byte Ed25519 key is the tail of the SPKI DER encoding.
  const nodeId = spki.subarray(spki.length - 32).toString('hex');
  return { nodeId, privateKey, file };
}
