// `swan-provider service install`: a systemd user unit so the agent starts with the session (Linux).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from './home';

export function systemdUnit(o: { home: string; config?: string; console?: string; node: string; bin: string }): string {
  const args = ['run', '--home', JSON.stringify(o.home), ...(o.config ? ['--config', JSON.stringify(path.resolve(o.config))] : []), ...(o.console ? ['--console', o.console] : [])];
  return `[Unit]
Description=Swan Provider Console agent (serves this machine's GPU on Swan Inference)
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=${o.node} ${o.bin} ${args.join(' ')}
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`;
}

export async function serviceInstallCommand(o: { home: string; config?: string; console?: string }): Promise<number> {
  if (process.platform !== 'linux') {
    process.stderr.write('service install writes a systemd user unit and works on Linux only. On Windows and macOS, use "Start at login" in the desktop app.\n');
    return 1;
  }
  const dir = path.join(process.env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'systemd', 'user');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'swan-provider.service');
  fs.writeFileSync(file, systemdUnit({ ...o, node: process.execPath, bin: path.join(packageRoot, 'bin', 'swan-provider.js') }));
  process.stdout.write(`Wrote ${file}\nEnable it with:\n  systemctl --user daemon-reload && systemctl --user enable --now swan-provider\n`);
  return 0;
}
