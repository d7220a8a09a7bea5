// Turning a vendor tool's failure into one sentence an owner can act on.
import { toolMessage, type ToolResult } from './run-tool';

/** '0.5 s', '10 s'. */
export function seconds(ms: number): string {
  return `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;
}

/** What went wrong with nvidia-smi, and what to do about it. */
export function explainNvidiaFailure(res: ToolResult, timeoutMs: number): string {
  if (res.timedOut) {
    return `nvidia-smi did not answer within ${seconds(timeoutMs)} (the driver may be reloading or stuck); GPU details are unknown until it answers again. If it persists, reboot the machine.`;
  }
  const msg = toolMessage(res);
  if (res.spawnError) return `nvidia-smi could not be started (${msg}).`;
  if (/Driver\/library version mismatch/i.test(msg)) {
    return `nvidia-smi: ${msg}. The NVIDIA driver was updated but the old kernel module is still loaded: reboot the machine (or reload the nvidia kernel modules), then restart the app.`;
  }
  if (/couldn't communicate with the NVIDIA driver|driver not loaded|NVIDIA driver is not loaded/i.test(msg)) {
    return `nvidia-smi: ${msg}. The NVIDIA driver is not running: install or reinstall it, then reboot.`;
  }
  if (/could not load NVML|NVML Shared Library Not Found/i.test(msg)) {
    return `nvidia-smi: ${msg}. The NVIDIA driver libraries are missing: reinstall the NVIDIA driver.`;
  }
  if (/GPU is lost|fallen off the bus/i.test(msg)) {
    return `nvidia-smi: ${msg}. A GPU stopped responding: reboot the machine and check its power and seating.`;
  }
  if (/insufficient permissions|permission denied/i.test(msg)) {
    return `nvidia-smi: ${msg}. The app's user may not access the GPU: check /dev/nvidia* permissions.`;
  }
  const code = res.code !== null ? ` (exit code ${res.code})` : res.signal ? ` (killed by ${res.signal})` : '';
  return `nvidia-smi failed${code}: ${msg || 'no output'}.`;
}

/** Same for amd-smi / rocm-smi. */
export function explainAmdFailure(tool: string, res: ToolResult, timeoutMs: number): string {
  if (res.timedOut) return `${tool} did not answer within ${seconds(timeoutMs)}.`;
  const msg = toolMessage(res);
  if (res.spawnError) return `${tool} could not be started (${msg}).`;
  if (/amdgpu.*not (found|loaded)|driver not initialized|AMDSMI_STATUS_DRIVER_NOT_LOADED/i.test(msg)) {
    return `${tool}: ${msg}. The amdgpu driver is not loaded: install ROCm's amdgpu driver, then reboot.`;
  }
  if (/permission/i.test(msg)) return `${tool}: ${msg}. Add the app's user to the 'render' and 'video' groups.`;
  const code = res.code !== null ? ` (exit code ${res.code})` : '';
  return `${tool} failed${code}: ${msg || 'no output'}.`;
}
