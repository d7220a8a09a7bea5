// The rigs this console reads: their addresses in <home>/fleet.json (0600), their tokens in the secret
// store (the OS keychain in the desktop app, <home>/secrets.json 0600 headless), never in the list
// itself and never in a log. Only the agent writes these; `usage --fleet` reads them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import { writeJsonAtomic } from '../config/atomic-file';
import { homePath } from '../config/home-layout';
import type { SecretStore } from '../config/secrets';

export interface RigEntry {
  id: string;
  /** The rig console's base address (rig-address.ts). */
  url: string;
  /** The owner's name for it ('' = the rig's own node name). */
  label: string;
  /** The rig's node id when it was added (the same rig is not added twice). */
  nodeId: string;
  addedAt: number;
}

const MAX_RIGS = 64;

const fileSchema = z.array(
  z.object({
    id: z.string().regex(/^[a-f0-9]{8,32}$/),
    url: z.string().max(2048),
    label: z.string().max(64),
    nodeId: z.string().max(256),
    addedAt: z.number(),
  }),
);

/** The secret-store key of a rig's token. */
export function rigSecretName(id: string): string {
  return `fleetRig.${id}`;
}

export class FleetStore {
  private readonly file: string;
  private entries: RigEntry[];

  constructor(
    home: string,
    private readonly secrets: Pick<SecretStore, 'get' | 'set' | 'delete'>,
  ) {
    this.file = homePath(home, 'fleet');
    this.entries = FleetStore.read(this.file);
  }

  static read(file: string): RigEntry[] {
    try {
      const r = fileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      return r.success ? r.data.slice(0, MAX_RIGS) : [];
    } catch {
      return [];
    }
  }

  list(): RigEntry[] {
    return [...this.entries];
  }

  get(id: string): RigEntry | undefined {
    return this.entries.find((e) => e.id === id);
  }

  token(id: string): string | undefined {
    return this.secrets.get(rigSecretName(id));
  }

  get full(): boolean {
    return this.entries.length >= MAX_RIGS;
  }

  add(e: Omit<RigEntry, 'id' | 'addedAt'>, token: string, now = Date.now()): RigEntry {
    const entry: RigEntry = { ...e, id: crypto.randomBytes(6).toString('hex'), addedAt: now };
    this.secrets.set(rigSecretName(entry.id), token);
    this.entries = [...this.entries, entry];
    writeJsonAtomic(this.file, this.entries);
    return entry;
  }

  remove(id: string): boolean {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.id !== id);
    if (this.entries.length === before) return false;
    writeJsonAtomic(this.file, this.entries);
    this.secrets.delete(rigSecretName(id));
    return true;
  }
}
