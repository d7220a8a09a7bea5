// `swan-provider fleet token create|list|revoke` on a home folder: the token alone on stdout (so a pipe takes
// just it), only its hash on disk, names checked, a revoke of an unknown name is exit 1.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fleetTokenCommand } from '../../src/cli/fleet-command';
import { FleetTokens } from '../../src/core/fleet/tokens';
import { tempHome } from '../support/stack';

function run(home: string, action: 'create' | 'list' | 'revoke', name?: string): { code: number; out: string; err: string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const code = fleetTokenCommand({ home, action, ...(name !== undefined ? { name } : {}), stdout, stderr });
  return { code, out: stdout.read()?.toString() ?? '', err: stderr.read()?.toString() ?? '' };
}

describe('fleet token', () => {
  it('creates, lists and revokes', () => {
    const home = tempHome('swan-fleet-cli-');
    const made = run(home, 'create', 'office-pc');
    expect(made.code).toBe(0);
    expect(made.out).toMatch(/^swan-fleet-[A-Za-z0-9_-]{43}\n$/);
    expect(made.err).toContain('shown once');
    const token = made.out.trim();
    expect(fs.readFileSync(path.join(home, 'fleet-tokens.json'), 'utf8')).not.toContain(token);
    expect(new FleetTokens(home).verify(token)).toEqual({ name: 'office-pc', scope: 'read' });
    expect(run(home, 'list').out).toMatch(/^name\s+scope\s+made\noffice-pc\s+read\s+\d{4}-/);
    expect(run(home, 'create', 'office-pc')).toMatchObject({ code: 2, err: expect.stringContaining('exists already') });
    expect(run(home, 'create', 'has space').code).toBe(2);
    expect(run(home, 'revoke', 'office-pc').code).toBe(0);
    expect(new FleetTokens(home).verify(token)).toBeUndefined();
    expect(run(home, 'revoke', 'office-pc').code).toBe(1);
    expect(run(home, 'list').out).toContain('No fleet tokens');
  });
});
