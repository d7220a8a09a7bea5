// vLLM as a managed container through Docker's Engine API (dockerode), against a stand-in of that API written
// from its documentation: created labelled as ours with the port on 127.0.0.1 only, waited for, its log lines
// read, restarted after it ends, stopped and removed; a container of the same name that is not ours is never
// touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { DockerEngines } from '../../../src/core/managed/docker-engines';
import { LABEL_MANAGED } from '../../../src/core/managed/docker';
import { ManagedEngines } from '../../../src/core/managed/supervisor';
import { addDesired, parseServeSpec, removeDesired } from '../../../src/core/managed/spec';
import { startDockerStandin } from '../../support/docker-standin';
import { tempHome, until } from '../../support/stack';

const ID = 'Qwen/Qwen2.5-7B-Instruct';

describe('managed vLLM container (Docker Engine API stand-in)', () => {
  let docker: Awaited<ReturnType<typeof startDockerStandin>>;
  let managed: ManagedEngines;
  const log = memoryLog();
  const home = tempHome('swan-docker-home-');
  const view = () => managed.view().find((e) => e.id === ID);

  beforeAll(async () => {
    docker = await startDockerStandin();
    managed = new ManagedEngines({
      home,
      env: {},
      log: log.child('managed'),
      secrets: (v) => log.addSecrets(v),
      changed: () => undefined,
      containers: new DockerEngines({ socketPath: docker.socketPath }),
      backoffMs: 100,
    });
    await managed.start();
  });

  afterAll(async () => {
    await managed?.stop();
    await docker?.close();
  });

  it('creates the container labelled as ours, publishes on 127.0.0.1 only, serves, and offers the entry', async () => {
    addDesired(home, parseServeSpec({ id: ID, backend: 'vllm', weights: home, gpus: '0,1', contextLength: 4096, args: [], addedAt: Date.now() }));
    await managed.reload();
    await until(() => view()?.phase === 'serving', 'the container serving', 15_000);
    const c = docker.containers.get('swan-qwen-qwen2.5-7b-instruct')!;
    expect(c.labels).toMatchObject({ [LABEL_MANAGED]: 'true', 'io.swanchain.provider-console.model-id': ID, 'io.swanchain.provider-console.backend': 'vllm' });
    const hc = c.body.HostConfig as {
      PortBindings: Record<string, Array<{ HostIp: string }>>;
      Binds: string[];
      DeviceRequests: Array<{ DeviceIDs: string[] }>;
    };
    expect(hc.PortBindings['8000/tcp']?.[0]?.HostIp).toBe('127.0.0.1');
    expect(hc.Binds).toEqual([`${home}:/models:ro`]);
    expect(hc.DeviceRequests[0]?.DeviceIDs).toEqual(['0', '1']);
    expect(c.body.Cmd).toEqual(expect.arrayContaining(['--served-model-name', ID, '--max-model-len', '4096', '--tensor-parallel-size', '2']));
    expect(managed.entries()[ID]?.endpoint).toBe(view()?.url);
    // Its log lines reach the agent's log.
    await until(() => log.entries(500).some((l) => /serving Qwen\/Qwen2\.5-7B-Instruct on port/.test(l.msg)), 'the container log line', 5000);
  });

  it('a container that ends is started again (engine_crashed), at the same address', async () => {
    const url = view()?.url;
    await docker.crash('swan-qwen-qwen2.5-7b-instruct');
    await until(() => (view()?.restarts ?? 0) >= 1, 'a restart', 10_000);
    await until(() => view()?.phase === 'serving', 'serving again', 15_000);
    expect(view()?.url).toBe(url);
  });

  it('stopped: the container is removed, the entry gone', async () => {
    removeDesired(home, ID);
    await managed.reload();
    expect(view()).toBeUndefined();
    expect(docker.containers.size).toBe(0);
    expect(managed.entries()).toEqual({});
  });

  it('a container of that name that is not ours is left alone and the serve fails with docker_unavailable', async () => {
    docker.containers.set('swan-qwen-qwen2.5-7b-instruct', {
      id: 'f'.repeat(64),
      name: 'swan-qwen-qwen2.5-7b-instruct',
      body: {},
      labels: {},
      running: false,
      waiters: [],
      logs: [],
    });
    addDesired(home, parseServeSpec({ id: ID, backend: 'vllm', weights: home, args: [], addedAt: Date.now() }));
    await managed.reload();
    await until(() => view()?.phase === 'failed', 'failed', 10_000);
    expect(view()?.code).toBe('docker_unavailable');
    expect(docker.containers.get('swan-qwen-qwen2.5-7b-instruct')?.id).toBe('f'.repeat(64));
  });
});
