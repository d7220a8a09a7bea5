// `swan-provider keys create|list|revoke`: API keys of the local gateway.
import { GatewayKeyError, GatewayKeys } from '../core/gateway/keys';
import { fmtDateTime } from '../shared/dates';

export function keysCommand(o: { home: string; action: 'create' | 'list' | 'revoke'; name?: string }): number {
  const keys = new GatewayKeys(o.home);
  try {
    if (o.action === 'create') {
      const k = keys.create(o.name ?? 'default');
      process.stdout.write(`${k.key}\n`);
      process.stderr.write(`Key "${k.name}" created. It is shown only now: store it somewhere safe.\n`);
    } else if (o.action === 'list') {
      const list = keys.list();
      if (list.length === 0) process.stdout.write('No gateway keys yet. Create one with: swan-provider keys create --name NAME\n');
      for (const k of list) {
        process.stdout.write(`${k.name}\tcreated ${fmtDateTime(k.createdAt)}${k.lastUsedAt ? `\tlast used ${fmtDateTime(k.lastUsedAt)}` : ''}\n`);
      }
    } else {
      if (!keys.revoke(o.name ?? '')) {
        process.stderr.write(`No key named "${o.name}". See them with: swan-provider keys list\n`);
        return 1;
      }
      process.stdout.write(`Key "${o.name}" revoked.\n`);
    }
    return 0;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    // A name the rules refuse is a usage error (2); anything else (a name taken, the file) is 1.
    return e instanceof GatewayKeyError && e.code === 'key_name_invalid' ? 2 : 1;
  }
}
