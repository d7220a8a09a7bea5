// Whether a process still exists, for the files that name one (the home lock, a download's lock, the engines
// the agent started).

/** Whether process `pid` exists (EPERM: it does, run by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
