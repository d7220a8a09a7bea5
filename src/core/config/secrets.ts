// Where the provider key and other secrets live. The desktop app passes a store backed by Electron's
// safeStorage (OS keychain); headless runs use a 0600 file in the home folder, and say so.
import fs from 'node:fs';
import path from 'node:path';
import { HOME_FILES } from './home-layout';
import { writeJsonAtomic } from './atomic-file';

export interface SecretStore {
  /** 'keychain' when the OS keychain protects the values, 'file' for a 0600 file. */
  readonly kind: 'keychain' | 'file';
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  delete(name: string): void;
}

/** Values in `<home>/secrets.json`, mode 0600. Used where no OS keychain is available. */
export class FileSecretStore implements SecretStore {
  readonly kind = 'file' as const;
  private readonly file: string;
  private values: Record<string, string>;

  constructor(home: string, fileName: string = HOME_FILES.secrets) {
    this.file = path.join(home, fileName);
    this.values = FileSecretStore.read(this.file);
  }

  private static read(file: string): Record<string, string> {
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
      }
    } catch {
      /* missing or unreadable: start empty */
    }
    return {};
  }

  get(name: string): string | undefined {
    return this.values[name];
  }

  set(name: string, value: string): void {
    this.values = { ...this.values, [name]: value };
    this.save();
  }

  delete(name: string): void {
    const { [name]: _gone, ...rest } = this.values;
    this.values = rest;
    this.save();
  }

  private save(): void {
    writeJsonAtomic(this.file, this.values);
  }
}
