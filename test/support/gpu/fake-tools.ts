// Fake nvidia-smi / amd-smi / rocm-smi: small bash scripts in a temp folder that replay the
// captures in test/fixtures/gpu for the arguments they get. PATH is set to that folder ONLY, so a
// real tool on a developer's machine is never picked up. The scripts use bash builtins for
// printing and waiting, so a killed script leaves no orphan child behind.
//
// Behaviour switches (environment of the spawned tool):
//   FAKE_SMI_MODE   ok (default) | mismatch | hang | die-first | hang-first
//   FAKE_SMI_FRAMES frames printed before 'die-first' / 'hang-first' act (default 2)
//   FAKE_SMI_STATE  file counting runs (one 'x' per run): '-first' modes act on run 1 only; spawn-mode sampling
//                   prints frame (run-1) mod n
//   FAKE_AMDSMI_FAIL=1  amd-smi fails as with the amdgpu driver not loaded
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/gpu');
export const BASH = '/bin/bash';

export function fixture(rel: string): string {
  return path.join(FIXTURES, rel);
}

export interface FakeBin {
  dir: string;
  /** Environment for detectGpus / GpuSampler: PATH = the fake folder only, plus switches. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  cleanup(): void;
}

export function makeFakeBin(): FakeBin {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-gpu-fake-'));
  return {
    dir,
    env: (extra = {}) => ({ PATH: dir, HOME: dir, LANG: 'C', ...extra }),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function write(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!${BASH}\n${body}`, { mode: 0o755 });
  return file;
}

/** nvidia-smi replaying `fixtureDir` (query-gpu.csv, stream.csv, table.txt, list.txt, compute-apps.csv). */
export function writeFakeNvidiaSmi(bin: FakeBin, fixtureDir: string): string {
  return write(
    bin.dir,
    'nvidia-smi',
    `F=${q(fixtureDir)}
MISMATCH=${q(fixture('nvidia/mismatch.txt'))}
out() { [[ -f "$F/$1" ]] && printf '%s\\n' "$(<"$F/$1")"; return 0; }
block() { exec 9<> <(:); while :; do read -r -u 9; done; }
RUN=1
if [[ -n "$FAKE_SMI_STATE" ]]; then
  # One character appended per run: a reader never sees a half-written counter.
  seen=""; [[ -f "$FAKE_SMI_STATE" ]] && seen=$(<"$FAKE_SMI_STATE")
  RUN=$(( \${#seen} + 1 ))
  printf 'x' >> "$FAKE_SMI_STATE"
fi
MODE="\${FAKE_SMI_MODE:-ok}"
case "$MODE" in
  mismatch) printf '%s\\n' "$(<"$MISMATCH")"; exit 18 ;;
  hang) block ;;
esac
frames=(); cur=""
if [[ -f "$F/stream.csv" ]]; then
  while IFS= read -r l || [[ -n "$l" ]]; do
    if [[ -z "$l" ]]; then [[ -n "$cur" ]] && frames+=("$cur"); cur=""; else cur+="$l"$'\\n'; fi
  done < "$F/stream.csv"
  [[ -n "$cur" ]] && frames+=("$cur")
fi
args="$*"
case "$args" in
  *--query-compute-apps=*) out compute-apps.csv ;;
  *-lms*)
    ms=\${args##*-lms }; ms=\${ms%% *}
    s=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
    exec 9<> <(:)
    i=0; printed=0
    while :; do
      printf '%s' "\${frames[i]}"
      printed=$((printed + 1))
      if [[ $RUN == 1 && $printed -ge \${FAKE_SMI_FRAMES:-2} ]]; then
        if [[ "$MODE" == die-first ]]; then
          printf 'Unable to determine the device handle for GPU0000:01:00.0: Unknown Error\\n'; exit 15
        elif [[ "$MODE" == hang-first ]]; then
          while :; do read -r -u 9; done
        fi
      fi
      i=$(( (i + 1) % \${#frames[@]} ))
      read -r -t "$s" -u 9
    done ;;
  *--query-gpu=index,name,*) out query-gpu.csv ;;
  *--query-gpu=index,utilization.gpu,*) printf '%s' "\${frames[$(( (RUN - 1) % \${#frames[@]} ))]}" ;;
  -L) out list.txt ;;
  "") out table.txt ;;
  *) printf 'fake nvidia-smi: unexpected arguments: %s\\n' "$args" >&2; exit 2 ;;
esac
`,
  );
}

/** amd-smi replaying `fixtureDir` (amd-smi-static.json, amd-smi-metric.json). */
export function writeFakeAmdSmi(bin: FakeBin, fixtureDir: string): string {
  return write(
    bin.dir,
    'amd-smi',
    `F=${q(fixtureDir)}
if [[ -n "$FAKE_AMDSMI_FAIL" ]]; then printf '%s\\n' "$(<${q(fixture('amd/amd-smi-driver-not-loaded.txt'))})" >&2; exit 1; fi
case "$1" in
  static) printf '%s\\n' "$(<"$F/amd-smi-static.json")" ;;
  metric) printf '%s\\n' "$(<"$F/amd-smi-metric.json")" ;;
  *) printf 'fake amd-smi: unexpected arguments: %s\\n' "$*" >&2; exit 2 ;;
esac
`,
  );
}

/** rocm-smi printing `file` whatever it is asked. */
export function writeFakeRocmSmi(bin: FakeBin, file: string): string {
  return write(bin.dir, 'rocm-smi', `printf '%s\\n' "$(<${q(file)})"\n`);
}
