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

export function loadOrCreateIdentity(home: string): Identity {
  const file = path.join(home, 'node-key.pem');
  fs.mkdirSync(home, { recursive: true });
  let privateKey: crypto.KeyObject;
  if (fs.existsSync(file)) {
    privateKey = crypto.createPrivateKey(fs.readFileSync(file, 'utf8'));
  } else {
    const pair = crypto.generateKeyPairSync('ed25519');
    privateKey = pair.privateKey;
    // 'wx' fails if another process created it meanwhile; then read theirs.
    try {
      fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    } catch {
      privateKey = crypto.createPrivateKey(fs.readFileSync(file, 'utf8'));
    }
  }
  const spki = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  // The raw 32-byte Ed25519 key is the tail of the SPKI DER encoding.
  const nodeId = spki.subarray(spki.length - 32).toString('hex');
  return { nodeId, privateKey, file };
}
