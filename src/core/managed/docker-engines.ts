// vLLM and SGLang containers through Docker's Engine API (dockerode): created from containerConfig (labelled as
// ours, the port on 127.0.0.1 only), started, their log lines read, their end awaited, stopped and removed. A
// container of the same name that is not labelled as ours is never touched: the serve is refused instead.
import { PassThrough } from 'node:stream';
import readline from 'node:readline';
import type Docker from 'dockerode';
import type { Running } from './engine-process';
import type { ContainerEngines } from './containers';
import { containerConfig, LABEL_MANAGED } from './docker';
import { ServeError, type ServeSpec } from './spec';

export interface DockerEnginesOptions {
  /** Docker's Engine API: a unix socket (default /var/run/docker.sock) or a TCP address on this machine. */
  socketPath?: string;
  host?: string;
  port?: number;
}

/** Where Docker's API is, as the docker CLI reads DOCKER_HOST (unix:///path or tcp://host:port); default the local socket. */
export function dockerAddress(env: NodeJS.ProcessEnv): DockerEnginesOptions {
  const h = env.DOCKER_HOST ?? '';
  if (h.startsWith('unix://')) return { socketPath: h.slice('unix://'.length) };
  const tcp = /^tcp:\/\/([^:/]+):(\d+)/.exec(h);
  if (tcp) return { host: tcp[1]!, port: Number(tcp[2]) };
  return {};
}

export class DockerEngines implements ContainerEngines {
  private docker?: Docker;

  constructor(private readonly o: DockerEnginesOptions = {}) {}

  private async client(): Promise<Docker> {
    if (!this.docker) {
      const { default: Dockerode } = await import('dockerode');
      this.docker = new Dockerode(
        this.o.host ? { host: this.o.host, port: this.o.port ?? 2375, protocol: 'http' } : { socketPath: this.o.socketPath ?? '/var/run/docker.sock' },
      );
    }
    return this.docker;
  }

  async start(spec: ServeSpec, o: { port: number; apiKey: string; line: (text: string) => void }): Promise<Running> {
    const docker = await this.client();
    const c = containerConfig(spec, { hostPort: o.port, apiKey: o.apiKey });
    try {
      await docker.ping();
    } catch (e) {
      throw new ServeError('docker_unavailable', `Docker does not answer (${(e as Error).message}): start Docker, or check that this user may use its socket.`);
    }
    // A leftover of ours (an agent that died) is removed; anyone else's container of that name is left alone.
    const old = docker.getContainer(c.name);
    const seen = await old.inspect().catch(() => undefined);
    if (seen) {
      if (seen.Config.Labels?.[LABEL_MANAGED] !== 'true')
        throw new ServeError('docker_unavailable', `A container named ${c.name} exists and was not created by this agent: rename or remove it first.`);
      await old.remove({ force: true });
    }
    const port = `${c.containerPort}/tcp`;
    const create = () =>
      docker.createContainer({
        name: c.name,
        Image: c.image,
        ...(c.entrypoint ? { Entrypoint: c.entrypoint.slice(0, 1), Cmd: [...c.entrypoint.slice(1), ...c.cmd] } : { Cmd: c.cmd }),
        Labels: c.labels,
        Env: c.env,
        ExposedPorts: { [port]: {} },
        HostConfig: {
          PortBindings: { [port]: [{ HostIp: '127.0.0.1', HostPort: String(c.hostPort) }] },
          Binds: [c.bind],
          ShmSize: 4 * 1024 ** 3,
          IpcMode: 'host',
          ...(c.gpus ? { DeviceRequests: [{ Driver: 'nvidia', Capabilities: [['gpu']], ...(c.gpus === 'all' ? { Count: -1 } : { DeviceIDs: c.gpus }) }] } : {}),
        },
      });
    let container: Docker.Container;
    try {
      container = await create();
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode !== 404) throw e;
      o.line(`pulling ${c.image} (first use)`);
      await new Promise<void>((resolve, reject) => {
        // The callback form: the error reaches reject below (the typings also declare a promise).
        void docker.pull(c.image, (err: Error | null, stream?: NodeJS.ReadableStream) => {
          if (err || !stream) return reject(err ?? new Error('no pull stream'));
          docker.modem.followProgress(stream, (e2: Error | null) => (e2 ? reject(e2) : resolve()));
        });
      });
      container = await create();
    }
    await container.start();
    const logs = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
    const lines = new PassThrough();
    docker.modem.demuxStream(logs, lines, lines);
    logs.on('end', () => lines.end());
    readline.createInterface({ input: lines, crlfDelay: Infinity }).on('line', o.line);
    const exited = container.wait().then(
      (r: { StatusCode?: number }) => `exit code ${r.StatusCode ?? '?'}`,
      (e: Error) => `container gone: ${e.message}`,
    );
    let done = false;
    void exited.then(() => (done = true));
    return {
      exited,
      stop: async () => {
        if (!done) await container.stop({ t: 10 }).catch(() => undefined);
        await exited;
        await container.remove({ force: true }).catch(() => undefined);
      },
    };
  }
}
