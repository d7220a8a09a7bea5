// Seed 003's FleetSnapshot, what its describe_fleet verb answers: this one rig (not the fleet/ feature, which reads many).
// Executors are the engines serving enabled models (local ones carry this machine's GPUs); loaded models are the enabled models on them.
import type { EngineType, GpuInfo } from '../../shared/types';

export interface ExecutorSummary {
  name: string;
  vendor: string;
  device_count: number;
}

export interface LoadedModel {
  name: string;
  revision: string | null;
  assigned_executor: string;
}

export interface FleetSnapshot {
  hostname: string;
  executors: ExecutorSummary[];
  loaded_models: LoadedModel[];
  active_requests: number;
}

export interface FleetInputs {
  hostname: string;
  gpus: GpuInfo[];
  /** Enabled models and where they run (ModelRegistry.all() filtered to enabled). */
  models: Array<{ id: string; endpoints: Array<{ url: string; engineType?: EngineType }> }>;
  /** Requests running now (Scheduler.inFlight()). */
  activeRequests: number;
}

function isLocal(url: string): boolean {
  try {
    const h = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return h === 'localhost' || h === '::1' || h.startsWith('127.');
  } catch {
    return false;
  }
}

function executorName(url: string, type: EngineType | undefined): string {
  let where = url;
  try {
    where = new URL(url).host;
  } catch {
    // keep the raw text
  }
  return `${type ?? 'engine'}@${where}`;
}

/** Builds the snapshot from plain inputs the Agent has. */
export function describeFleet(i: FleetInputs): FleetSnapshot {
  const vendors = [...new Set(i.gpus.map((g) => g.vendor))];
  const executors = new Map<string, ExecutorSummary>();
  const loaded: LoadedModel[] = [];
  for (const m of i.models) {
    for (const ep of m.endpoints) {
      const name = executorName(ep.url, ep.engineType);
      if (!executors.has(name)) {
        const local = isLocal(ep.url);
        executors.set(name, {
          name,
          vendor: local ? (vendors.length === 1 ? String(vendors[0]) : vendors.length === 0 ? 'cpu' : vendors.join('+')) : 'remote',
          device_count: local ? i.gpus.length : 0,
        });
      }
      loaded.push({ name: m.id, revision: null, assigned_executor: name });
    }
  }
  return { hostname: i.hostname, executors: [...executors.values()], loaded_models: loaded, active_requests: i.activeRequests };
}
