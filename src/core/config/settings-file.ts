// What the owner changes in the console, kept in the home folder (config.toml stays as the owner
// wrote it): settings.json overlays the config; model toggles and limits live beside it. A patch is
// checked before it reaches here (owner/settings-patch.ts).
import fs from 'node:fs';
import { z } from 'zod';
import { homePath } from './home-layout';
import { writeJsonAtomic } from './atomic-file';

const stored = z
  .object({
    hubUrl: z.string(),
    serviceUrl: z.string(),
    nodeName: z.string(),
    gatewayEnabled: z.boolean(),
    gatewayListen: z.string(),
    startAtLogin: z.boolean(),
    closeToTray: z.boolean(),
    theme: z.enum(['system', 'light', 'dark']),
    autoPauseOnGpuBusy: z.boolean(),
    gpuTemperatureCeilingC: z.number(),
    gpuPowerCeilingW: z.number(),
    /** The GPUs the owner gave back (indexes): on a rig with several, the others serve. */
    gpusGivenBack: z.array(z.number().int().min(0).max(255)).max(64),
    pauseSchedule: z.array(z.object({ days: z.array(z.number()), from: z.string(), to: z.string(), gpus: z.array(z.number()).optional() })),
    retentionDays: z.number().int(),
    onboarded: z.boolean(),
    alertWebhookUrl: z.string(),
    alertCooldownMinutes: z.number().int(),
    alertEmailTo: z.string(),
    alertSmtpServer: z.string(),
    desktopNotifications: z.boolean(),
    updateFeedUrl: z.string(),
    extraEndpoints: z.array(z.object({ url: z.string(), model: z.string().optional() })),
    models: z.record(
      z.string(),
      z.object({
        enabled: z.boolean().optional(),
        maxConcurrent: z.number().int().optional(),
        maxQueue: z.number().int().optional(),
        confirmedMapping: z.string().max(2048).optional(),
      }),
    ),
  })
  .partial();
export type StoredSettings = z.infer<typeof stored>;

export class SettingsFile {
  private data: StoredSettings;
  constructor(private readonly file: string) {
    this.data = SettingsFile.read(file);
  }

  static in(home: string): SettingsFile {
    return new SettingsFile(homePath(home, 'settings'));
  }

  private static read(file: string): StoredSettings {
    try {
      const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      const r = stored.safeParse(raw);
      if (r.success) return r.data;
      // Keep every valid setting; drop only the fields that are wrong.
      const bad = new Set(r.error.issues.map((i) => String(i.path[0])));
      const kept = stored.safeParse(Object.fromEntries(Object.entries(raw ?? {}).filter(([k]) => !bad.has(k))));
      return kept.success ? kept.data : {};
    } catch {
      return {};
    }
  }

  get(): StoredSettings {
    return this.data;
  }

  update(fn: (s: StoredSettings) => StoredSettings): void {
    this.data = fn(structuredClone(this.data));
    writeJsonAtomic(this.file, this.data);
  }
}
