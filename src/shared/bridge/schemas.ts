// What each bridge verb takes: one zod schema per channel, validated where the call lands (the agent's
// handlers, the desktop's IPC guard, the console's WebSocket), so a caller's types are never trusted.
import { z } from 'zod';
import type { InvokeChannel } from './channels';

const modelId = z.string().min(1).max(256);
/** Making a named credential (a gateway key, a fleet token): the first call is refused with
 *  OWNER_CONFIRMATION_REQUIRED carrying a grant (a secret in that one reply), and once the owner approved
 *  outside the console, the second call brings that grant. */
const grant = z
  .string()
  .regex(/^[A-Za-z0-9_-]{32,64}$/)
  .optional();
const credentialCreate = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'use letters, digits, dot, dash or underscore (1-64)'),
    grant,
  })
  .strict();
const range = z
  .object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() })
  .refine((r) => r.to >= r.from, 'to must not be before from');

/** A wallet address; the agent checks its form again and says so in the owner's words. */
const walletAddress = z.string().trim().min(1).max(128);

export const settingsPatchSchema = z
  .object({
    hubUrl: z.string().max(2048),
    serviceUrl: z.string().max(2048),
    nodeName: z.string().max(128),
    providerKey: z.string().max(512),
    gatewayEnabled: z.boolean(),
    gatewayListen: z.string().max(128),
    startAtLogin: z.boolean(),
    closeToTray: z.boolean(),
    theme: z.enum(['system', 'light', 'dark']),
    autoPauseOnGpuBusy: z.boolean(),
    /** Guard rails (0: off): a GPU at the ceiling gets fewer requests, then pauses serving until it cools. */
    gpuTemperatureCeilingC: z.number().int('a whole number of °C').min(0).max(110, 'at most 110 °C'),
    gpuPowerCeilingW: z.number().int('a whole number of watts').min(0).max(2000, 'at most 2,000 W'),
    pauseSchedule: z
      .array(
        z
          .object({
            days: z.array(z.number().int()).max(7),
            from: z.string().max(8),
            to: z.string().max(8),
            gpus: z.array(z.number().int()).max(64).optional(),
          })
          .strict(),
      )
      .max(20),
    retentionDays: z.number().int(),
    alertWebhookUrl: z.string().max(2048),
    alertCooldownMinutes: z.number().int(),
    alertEmailTo: z.string().max(320),
    alertSmtpServer: z.string().max(2048),
    /** Write-only: kept in the secret store ('' removes it). */
    alertSmtpPassword: z.string().max(512),
    desktopNotifications: z.boolean(),
    updateFeedUrl: z.string().max(2048),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

export const invokeSchemas = {
  'snapshot.get': z.object({}).strict(),
  'models.setEnabled': z.object({ model: modelId, enabled: z.boolean() }).strict(),
  'models.warmup': z.object({ model: modelId }).strict(),
  'models.setLimits': z.object({ model: modelId, maxConcurrent: z.number().int().min(1).max(1024), maxQueue: z.number().int().min(0).max(10_000) }).strict(),
  'serving.pause': z.object({ reason: z.string().max(200).optional() }).strict(),
  'serving.resume': z.object({}).strict(),
  'settings.get': z.object({}).strict(),
  'settings.save': z.object({ patch: settingsPatchSchema }).strict(),
  'settings.checkKey': z.object({ key: z.string().min(1).max(512) }).strict(),
  'requests.list': z.object({ limit: z.number().int().min(1).max(10_000).optional() }).strict(),
  'requests.text': z.object({ id: z.string().min(1).max(256) }).strict(),
  'usage.report': z
    .object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative(), bucket: z.enum(['15m', 'hour', 'day', 'month']) })
    .strict()
    .refine((r) => r.to >= r.from, 'to must not be before from'),
  'usage.exportCsv': range,
  'usage.rails': range,
  'earnings.overview': z.object({ refresh: z.boolean().optional() }).strict(),
  'demand.list': z.object({}).strict(),
  'demand.pull': z
    .object({ engineUrl: z.string().min(1).max(2048), model: z.string().min(1).max(200), networkId: z.string().min(1).max(256).optional() })
    .strict(),
  'demand.serve': z.object({ modelId: z.string().min(1).max(256) }).strict(),
  'earnings.setElectricity': z
    .object({
      perKwh: z.number().min(0).max(100).nullable(),
      currency: z
        .string()
        .regex(/^[A-Z]{3}$/, 'use a three-letter currency code such as USD or EUR')
        .optional(),
      usdPerUnit: z.number().positive().max(100_000).optional(),
    })
    .strict(),
  'engines.rescan': z.object({}).strict(),
  'engines.addEndpoint': z.object({ url: z.string().min(1).max(2048), model: modelId.optional() }).strict(),
  'engines.removeEndpoint': z.object({ url: z.string().min(1).max(2048) }).strict(),
  'gpu.history': z.object({ minutes: z.number().int().min(1).max(60) }).strict(),
  'gpu.processes': z.object({}).strict(),
  'gpu.giveBack': z.object({ index: z.number().int().min(0).max(255), givenBack: z.boolean() }).strict(),
  'gpu.powerLimits': z.object({}).strict(),
  // consent: the owner confirmed the change (it acts on the machine's driver, beyond this app).
  'gpu.setPowerLimit': z.object({ index: z.number().int().min(0).max(255), watts: z.number().int().min(1).max(2000), consent: z.literal(true) }).strict(),
  'logs.list': z.object({ level: z.enum(['debug', 'info', 'warn', 'error']).optional(), limit: z.number().int().min(1).max(5000).optional() }).strict(),
  'logs.bundle': z.object({}).strict(),
  'gateway.keys.list': z.object({}).strict(),
  'gateway.keys.create': credentialCreate,
  'gateway.keys.revoke': z.object({ name: z.string().min(1).max(64) }).strict(),
  'onboarding.complete': z.object({}).strict(),
  'prices.list': z.object({}).strict(),
  'prices.set': z
    .object({ model: z.union([modelId, z.literal('*')]), inputPerM: z.number().min(0).max(1_000_000), outputPerM: z.number().min(0).max(1_000_000) })
    .strict(),
  'notices.list': z.object({}).strict(),
  'providerStatus.refresh': z.object({}).strict(),
  'alerts.list': z.object({}).strict(),
  'alerts.test': z.object({}).strict(),
  'models.try': z
    .object({ model: modelId, prompt: z.string().trim().min(1, 'type a short prompt').max(4000), maxTokens: z.number().int().min(1).max(1024).optional() })
    .strict(),
  'update.check': z.object({}).strict(),
  'update.download': z.object({}).strict(),
  'update.install': z.object({ when: z.enum(['now', 'on-quit']) }).strict(),
  'update.status': z.object({}).strict(),
  'app.info': z.object({}).strict(),
  'link.retry': z.object({}).strict(),
  'gpu.longHistory': z.object({ hours: z.number().int().min(1).max(168) }).strict(),
  'usage.model': z.object({ model: modelId, hours: z.number().int().min(1).max(168) }).strict(),
  'network.records': z.object({ span: z.enum(['24h', '7d', '30d']) }).strict(),
  'console.sessions': z.object({}).strict(),
  /** Ends one browser session by its id, or every one ("sign out everywhere") without it. */
  'console.signOut': z
    .object({
      id: z
        .string()
        .regex(/^[0-9a-f]{12}$/)
        .optional(),
    })
    .strict(),
  'fleet.list': z.object({}).strict(),
  'fleet.add': z.object({ url: z.string().min(1).max(2600), token: z.string().max(512).optional(), label: z.string().max(64).optional() }).strict(),
  'fleet.remove': z.object({ id: z.string().min(1).max(64) }).strict(),
  'fleet.openConsole': z.object({ id: z.string().min(1).max(64) }).strict(),
  'fleet.usage': z.object({}).strict(),
  'fleet.tokens.list': z.object({}).strict(),
  'fleet.tokens.create': credentialCreate,
  'fleet.tokens.revoke': z.object({ name: z.string().min(1).max(64) }).strict(),
  'managed.list': z.object({}).strict(),
  // No program path, passthrough flags or image from the console: those run as the owner, so only the
  // CLI (the owner's own shell) may name them.
  'managed.serve': z
    .object({
      id: modelId,
      backend: z.enum(['llamacpp', 'vllm', 'sglang']).optional(),
      weights: z.string().min(1).max(4096).optional(),
      gpus: z.string().max(300).optional(),
      contextLength: z.number().int().min(64).max(10_000_000).optional(),
      slots: z.number().int().min(1).max(256).optional(),
    })
    .strict(),
  'managed.stop': z.object({ id: modelId }).strict(),
  'models.confirmMapping': z.object({ model: modelId, signature: z.string().min(1).max(2048) }).strict(),
  'models.recommend': z.object({ vramGb: z.number().min(1).max(4096).optional() }).strict(),
  'models.serveAs': z.object({ model: modelId, networkId: modelId }).strict(),
  'models.catalogueIds': z.object({}).strict(),
  'downloads.list': z.object({}).strict(),
  'downloads.start': z.object({ modelId }).strict(),
  'downloads.cancel': z.object({ modelId }).strict(),
  'account.get': z.object({}).strict(),
  /** Held for the owner as a credential is: the second call brings the `grant` the first one's refusal carried. */
  'account.setBeneficiary': z.object({ address: walletAddress, grant }).strict(),
  /** `permanent: true` is the owner's yes to "this cannot be changed", given before the approval is asked. */
  'account.setOwner': z.object({ address: walletAddress, permanent: z.literal(true), grant }).strict(),
  'account.requestApproval': z
    .object({
      providerName: z.string().trim().max(128).optional(),
      hardwareSummary: z.string().trim().min(1, 'describe the hardware (e.g. 2x RTX 4090, 128 GB RAM)').max(500),
      contactEmail: z.string().trim().email('type the e-mail address the platform writes to about the approval').max(254),
    })
    .strict(),
} as const satisfies { readonly [C in InvokeChannel]: z.ZodType }; // the names are channels.ts's: none missing, none extra

export type InvokeArgs<C extends InvokeChannel> = z.infer<(typeof invokeSchemas)[C]>;
