// loadConfig against real files in a temp folder: every key of [Inference], [API], [Agent] and [Gateway],
// the defaults, env overrides, and a bad file refused with the file, the line and what is wrong.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_HUB_URL, deriveServiceUrl, hubDialUrl, loadConfig } from '../../../src/core/config/config';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-config-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(toml: string, models?: string): string {
  const file = path.join(dir, 'config.toml');
  fs.writeFileSync(file, toml);
  if (models !== undefined) fs.writeFileSync(path.join(dir, 'models.json'), models);
  return file;
}

/** The ConfigError loadConfig throws for this file (fails the test when it loads). */
function refusal(file: string, env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    loadConfig(file, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`${file} was accepted`);
}

describe('values and defaults', () => {
  it('an empty file gives the documented defaults', () => {
    const c = loadConfig(write(''), {});
    expect(c.agent.heartbeatIntervalMs).toBe(30_000); // the Go provider's heartbeatPump
    expect(c.agent.healthCheckIntervalMs).toBe(30_000);
    expect(c.agent.pingIntervalMs).toBe(54_000);
    expect(c.agent.readTimeoutMs).toBe(60_000);
    expect(c.agent.reconnectMaxBackoffMs).toBe(30_000);
    expect(c.agent.authFailedBackoffMs).toBe(300_000);
    expect(c.agent.resumeGraceMs).toBe(2_000);
    expect(c.agent.resumeTtlMs).toBe(300_000);
    expect(c.agent.queueTimeoutMs).toBe(30_000);
    expect(c.agent.gpuSampleIntervalMs).toBe(1_000);
    expect(c.agent.engineHeadersTimeoutMs).toBe(60_000);
    expect(c.agent.engineIdleTimeoutMs).toBe(120_000);
    expect(c.agent).toMatchObject({ maxConcurrentPerEndpoint: 4, maxQueuePerModel: 32, discovery: true, engineHosts: [], ownerAddr: '' });
    expect(c.agent.handshakeTimeoutMs).toBe(10_000); // Go's dialer HandshakeTimeout
    expect(c.agent.writeTimeoutMs).toBe(10_000); // Go's writeWait
    expect(c.gateway).toEqual({ enable: false, listen: '127.0.0.1:18080', websocketAuth: true, allowedOrigins: [] });
    expect(c).toMatchObject({
      nodeName: 'my-provider',
      enable: true,
      webSocketUrl: DEFAULT_HUB_URL,
      serviceUrl: 'http://127.0.0.1:8081',
      apiKey: '',
      models: [],
      modelEntries: {},
    });
    expect(c.file).toBe(path.resolve(dir, 'config.toml'));
    expect(c.warnings).toEqual([]);
  });

  it('reads every [API] and [Inference] key', () => {
    const c = loadConfig(
      write(`[API]
NodeName = "garage-4090"

[Inference]
Enable = false
ServiceURL = "https://inference.example.org"
WebSocketURL = "wss://inference-ws.example.org"
ApiKey = "sk-prov-abcdef123456"
Models = ["a/b", "c"]
`),
      {},
    );
    expect(c).toMatchObject({
      nodeName: 'garage-4090',
      enable: false,
      serviceUrl: 'https://inference.example.org',
      webSocketUrl: 'wss://inference-ws.example.org',
      apiKey: 'sk-prov-abcdef123456',
      models: ['a/b', 'c'],
    });
  });

  it('reads every [Agent] key, fractions of a second included', () => {
    const c = loadConfig(
      write(`[Agent]
HeartbeatIntervalSeconds = 0.2
HealthCheckIntervalSeconds = 0.1
PingIntervalSeconds = 0.25
ReadTimeoutSeconds = 1.5
ReconnectMaxBackoffSeconds = 0.05
AuthFailedBackoffSeconds = 7
ResumeGraceSeconds = 0
ResumeTtlSeconds = 12
MaxConcurrentPerEndpoint = 9
MaxQueuePerModel = 0
QueueTimeoutSeconds = 2.5
Discovery = false
EngineHosts = ["http://192.168.1.20:8000", "http://10.0.0.5:11434"]
GpuSampleIntervalSeconds = 0.5
GpuProcessCheckSeconds = 1.5
ReleaseSigningKeys = ["ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
EngineHeadersTimeoutSeconds = 3
EngineIdleTimeoutSeconds = 4.25
EngineTotalTimeoutSeconds = 7
DeepHealthCheckEvery = 3
SelfHealFailures = 5
SelfHealHoldSeconds = 1.5
LlamaServer = "/opt/llama.cpp/llama-server"
PauseFreesGpu = true
GpuTemperatureCeilingC = 83
GpuPowerCeilingW = 300
RetentionMegabytes = 0.5
HandshakeTimeoutSeconds = 3
WriteTimeoutSeconds = 2
OwnerAddr = "0x00000000000000000000000000000000000000aB"
`),
      {},
    );
    expect(c.agent).toEqual({
      handshakeTimeoutMs: 3000,
      writeTimeoutMs: 2000,
      ownerAddr: '0x00000000000000000000000000000000000000aB',
      heartbeatIntervalMs: 200,
      healthCheckIntervalMs: 100,
      pingIntervalMs: 250,
      readTimeoutMs: 1500,
      reconnectMaxBackoffMs: 50,
      authFailedBackoffMs: 7000,
      resumeGraceMs: 0,
      resumeTtlMs: 12_000,
      queueTimeoutMs: 2500,
      gpuSampleIntervalMs: 500,
      gpuProcessCheckMs: 1500,
      releaseSigningKeys: ['ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='],
      engineHeadersTimeoutMs: 3000,
      engineIdleTimeoutMs: 4250,
      engineTotalTimeoutMs: 7000,
      deepHealthCheckEvery: 3,
      selfHealFailures: 5,
      selfHealHoldMs: 1500,
      llamaServer: '/opt/llama.cpp/llama-server',
      pauseFreesGpu: true,
      gpuTemperatureCeilingC: 83,
      gpuPowerCeilingW: 300,
      retentionBytes: 512 * 1024,
      maxConcurrentPerEndpoint: 9,
      capacityAuto: false,
      maxQueuePerModel: 0,
      discovery: false,
      engineHosts: ['http://192.168.1.20:8000', 'http://10.0.0.5:11434'],
    });
  });

  it('reads every [Gateway] key', () => {
    const c = loadConfig(
      write(`[Gateway]
Enable = true
Listen = "0.0.0.0:9000"
WebsocketAuth = false
AllowedOrigins = ["http://localhost:5173"]
`),
      {},
    );
    expect(c.gateway).toEqual({ enable: true, listen: '0.0.0.0:9000', websocketAuth: false, allowedOrigins: ['http://localhost:5173'] });
  });

  it('derives ServiceURL from WebSocketURL when it is missing or empty', () => {
    expect(loadConfig(write('[Inference]\nWebSocketURL = "wss://hub.example.org/ws"\n'), {}).serviceUrl).toBe('https://hub.example.org');
    expect(loadConfig(write('[Inference]\nServiceURL = ""\nWebSocketURL = "ws://10.1.2.3:8081"\n'), {}).serviceUrl).toBe('http://10.1.2.3:8081');
  });

  it('derives ServiceURL exactly as the Go NewInferenceClient does', () => {
    // wss -> https, ws -> http, a trailing /ws dropped, then the first "-ws" dropped.
    expect(deriveServiceUrl('wss://inference-ws.swanchain.io')).toBe('https://inference.swanchain.io');
    expect(deriveServiceUrl('wss://inference-ws-dev.swanchain.io/ws')).toBe('https://inference-dev.swanchain.io');
    expect(deriveServiceUrl('ws://127.0.0.1:8081')).toBe('http://127.0.0.1:8081');
    expect(deriveServiceUrl('ws://127.0.0.1:8081/ws')).toBe('http://127.0.0.1:8081');
    // Go's TrimSuffix takes "/ws" only: a trailing slash after it stays, as in Go.
    expect(deriveServiceUrl('ws://hub.example/ws/')).toBe('http://hub.example/ws/');
    expect(loadConfig(write('[Inference]\nWebSocketURL = "wss://inference-ws.swanchain.io"\n'), {}).serviceUrl).toBe('https://inference.swanchain.io');
  });

  it('reads models.json beside the config, keeping extra fields', () => {
    const c = loadConfig(
      write(
        '',
        JSON.stringify({
          'meta-llama/Llama-3.2-3B-Instruct': {
            endpoint: 'http://127.0.0.1:30000',
            local_model: 'llama3.2:3b',
            api_key: 'sk-local-1',
            gpu_memory: 8000,
            format: 'gguf',
            quantization: 'q4_k_m',
            max_concurrent: 2,
            category: 'text-generation',
          },
          small: { endpoint: 'http://127.0.0.1:8000/v1' },
        }),
      ),
      {},
    );
    expect(Object.keys(c.modelEntries)).toEqual(['meta-llama/Llama-3.2-3B-Instruct', 'small']);
    expect(c.modelEntries['meta-llama/Llama-3.2-3B-Instruct']).toEqual({
      endpoint: 'http://127.0.0.1:30000',
      local_model: 'llama3.2:3b',
      api_key: 'sk-local-1',
      gpu_memory: 8000,
      format: 'gguf',
      quantization: 'q4_k_m',
      max_concurrent: 2,
      category: 'text-generation',
    });
    expect(c.modelEntries.small).toEqual({ endpoint: 'http://127.0.0.1:8000/v1' });
  });
});

describe('environment overrides', () => {
  const toml = '[Inference]\nWebSocketURL = "ws://from-file:1"\nApiKey = "sk-prov-fromfile99"\n';

  it('INFERENCE_WS_URL and INFERENCE_API_KEY win over the file, each noted in warnings', () => {
    const c = loadConfig(write(toml), { INFERENCE_WS_URL: 'wss://from-env.example', INFERENCE_API_KEY: 'sk-prov-fromenv77' });
    expect(c.webSocketUrl).toBe('wss://from-env.example');
    expect(c.apiKey).toBe('sk-prov-fromenv77');
    expect(c.serviceUrl).toBe('https://from-env.example');
    expect(c.warnings).toEqual(['WebSocketURL taken from INFERENCE_WS_URL', 'provider key taken from INFERENCE_API_KEY']);
    // The warning never carries the key itself.
    expect(c.warnings.join(' ')).not.toContain('sk-prov-fromenv77');
  });

  it('empty variables do not override', () => {
    const c = loadConfig(write(toml), { INFERENCE_WS_URL: '', INFERENCE_API_KEY: '' });
    expect(c.webSocketUrl).toBe('ws://from-file:1');
    expect(c.apiKey).toBe('sk-prov-fromfile99');
    expect(c.warnings).toEqual([]);
  });

  it('a bad INFERENCE_WS_URL is blamed on the variable, not on a line of the file', () => {
    const e = refusal(write(toml), { INFERENCE_WS_URL: 'http://wrong' });
    expect(e.line).toBeUndefined();
    expect(e.problem).toContain('INFERENCE_WS_URL');
    expect(e.problem).toContain('ws:// or wss://');
  });

  it('reads process.env when no env is passed', () => {
    const before = process.env.INFERENCE_API_KEY;
    process.env.INFERENCE_API_KEY = 'sk-prov-processenv1';
    try {
      expect(loadConfig(write(toml)).apiKey).toBe('sk-prov-processenv1');
    } finally {
      if (before === undefined) delete process.env.INFERENCE_API_KEY;
      else process.env.INFERENCE_API_KEY = before;
    }
  });
});

describe('a bad file is refused with the file, the line and what is wrong', () => {
  it('a missing file says how to get one', () => {
    const e = refusal(path.join(dir, 'nope.toml'));
    expect(e).toMatchObject({ code: 'unreadable', file: path.join(dir, 'nope.toml') });
    // What to do next is in the message.
    expect(e.message).toContain('swan-provider init');
  });

  it('TOML syntax error', () => {
    const e = refusal(write('[API]\nNodeName = "x"\n\n[Inference]\nEnable = tru\n'));
    expect(e.file).toBe(path.join(dir, 'config.toml'));
    expect(e).toMatchObject({ code: 'toml_syntax', line: 5 });
    expect(e.message).toBe(`${path.join(dir, 'config.toml')}:5: ${e.problem}`);
  });

  it('a duplicate section is a syntax error on its line', () => {
    const e = refusal(write('[API]\nNodeName = "a"\n[API]\nNodeName = "b"\n'));
    expect(e).toMatchObject({ code: 'toml_syntax', line: 3 });
  });

  it.each([
    ['[Inference] Models as a string', '[API]\nNodeName = "x"\n[Inference]\nEnable = true\nModels = "a"\n', 5, 'Inference.Models'],
    ['[Inference] Enable as a string', '[Inference]\n\nEnable = "yes"\n', 3, 'Inference.Enable'],
    ['[API] NodeName as a number', '# comment\n[API]\nNodeName = 5\n', 3, 'API.NodeName'],
    ['[Agent] seconds as a string', '[Agent]\n\nHeartbeatIntervalSeconds = "fast"\n', 3, 'Agent.HeartbeatIntervalSeconds'],
    ['[Agent] zero seconds', '[Agent]\nPingIntervalSeconds = 1\nReadTimeoutSeconds = 0\n', 3, 'Agent.ReadTimeoutSeconds'],
    ['[Agent] negative seconds', '[Agent]\nHeartbeatIntervalSeconds = -1\n', 2, 'Agent.HeartbeatIntervalSeconds'],
    ['[Agent] over a day', '[Agent]\nReconnectMaxBackoffSeconds = 90000\n', 2, 'Agent.ReconnectMaxBackoffSeconds'],
    ['[Agent] fractional count', '[Agent]\nMaxConcurrentPerEndpoint = 1.5\n', 2, 'Agent.MaxConcurrentPerEndpoint'],
    ['[Gateway] Enable as a number', '[Gateway]\nEnable = 1\n', 2, 'Gateway.Enable'],
  ])('wrong type: %s', (_name, toml, line, setting) => {
    const e = refusal(write(toml));
    expect(e).toMatchObject({ code: 'invalid_setting', line, setting });
    // The message names the setting the way the file spells it.
    expect(e.problem).toContain(`[${setting.replace('.', '] ')}`);
  });

  it('the range of a count is spelled out', () => {
    const e = refusal(write('[Agent]\nMaxConcurrentPerEndpoint = 1.5\n'));
    expect(e.problem).toContain('a whole number from 1 to 1024, or "auto"');
  });

  it('the same key in another section does not mislead the line', () => {
    const e = refusal(write('[API]\nEnable = "x"\n[Inference]\nEnable = "yes"\n'));
    expect(e.line).toBe(4);
  });

  it('a section that is not a table', () => {
    const e = refusal(write('Inference = 5\n'));
    expect(e).toMatchObject({ code: 'invalid_setting', setting: 'Inference' });
  });

  it('unknown [Agent] key names the key and its line', () => {
    const e = refusal(write('[Agent]\nHeartbeatIntervalSeconds = 1\nHeartbeatIntervalSecs = 3\n'));
    expect(e).toMatchObject({ code: 'unknown_setting', line: 3, setting: 'Agent.HeartbeatIntervalSecs' });
    expect(e.problem).toBe('unknown setting "HeartbeatIntervalSecs" in [Agent]. Check its spelling.');
  });

  it('unknown [Gateway] key too', () => {
    const e = refusal(write('[Gateway]\nListen = "127.0.0.1:1"\nPort = 3\n'));
    expect(e).toMatchObject({ code: 'unknown_setting', line: 3, setting: 'Gateway.Port' });
  });

  it('an unknown quoted key with regex characters is reported, not crashed on', () => {
    const e = refusal(write('[Agent]\n\n"Heart(beat" = 1\n'));
    expect(e).toMatchObject({ code: 'unknown_setting', line: 3, setting: 'Agent.Heart(beat' });
  });

  it.each(['http://hub.example', 'hub.example:8081', ''])('WebSocketURL %j with a wrong scheme', (url) => {
    const e = refusal(write(`[Inference]\nEnable = true\nWebSocketURL = "${url}"\n`));
    expect(e).toMatchObject({ code: 'hub_url_scheme', line: 3, setting: 'Inference.WebSocketURL' });
  });

  it.each(['localhost', '127.0.0.1:', ':8080', '127.0.0.1:99999', '127.0.0.1:0', 'my host:80'])('Listen %j', (listen) => {
    const e = refusal(write(`[Gateway]\nEnable = true\nListen = "${listen}"\n`));
    expect(e).toMatchObject({ code: 'listen_format', line: 3, setting: 'Gateway.Listen' });
  });

  it('models.json that is not JSON: the file, the line of the error, and what to do', () => {
    const file = write('', '{\n  "a": {\n    "endpoint": "http://x",\n  }\n}\n');
    const e = refusal(file);
    expect(e).toMatchObject({ code: 'json_syntax', file: path.join(dir, 'models.json'), line: 4 });
    expect(e.problem).toMatch(/\. Fix the syntax or delete the file\.$/);
  });

  it('models.json entry without an endpoint: the model, its line, the field', () => {
    const e = refusal(write('', '{\n  "a": {"endpoint": "http://x"},\n  "b": {\n    "local_model": "y"\n  }\n}\n'));
    expect(e).toMatchObject({ code: 'invalid_model_entry', file: path.join(dir, 'models.json'), line: 3, setting: 'b.endpoint' });
    // The message shows the smallest valid entry.
    expect(e.problem).toContain('{"endpoint": "http://127.0.0.1:8000"}');
  });

  it('models.json entry with a wrong type', () => {
    const e = refusal(write('', '{\n  "a": {"endpoint": "http://x", "gpu_memory": "8GB"}\n}\n'));
    expect(e).toMatchObject({ code: 'invalid_model_entry', line: 2, setting: 'a.gpu_memory' });
  });

  it('models.json: the line is the bad entry, not an earlier value equal to its id', () => {
    const e = refusal(write('', '{\n  "pub": {"endpoint": "http://x", "local_model": "llama3"},\n  "llama3": {"endpoint": ""}\n}\n'));
    expect(e).toMatchObject({ code: 'invalid_model_entry', line: 3, setting: 'llama3.endpoint' });
  });

  it('[Agent] OwnerAddr must be a 0x address (or empty); models.json context_length a positive integer', () => {
    expect(refusal(write('[Agent]\nOwnerAddr = "my wallet"\n'))).toMatchObject({ code: 'invalid_setting', setting: 'Agent.OwnerAddr' });
    expect(loadConfig(write('[Agent]\nOwnerAddr = ""\n'), {}).agent.ownerAddr).toBe('');
    const e = refusal(write('', JSON.stringify({ m: { endpoint: 'http://127.0.0.1:8000', context_length: -5 } })));
    expect(e).toMatchObject({ code: 'invalid_model_entry', setting: 'm.context_length' });
    expect(loadConfig(write('', JSON.stringify({ m: { endpoint: 'http://127.0.0.1:8000', context_length: 32768 } })), {}).modelEntries.m?.context_length).toBe(
      32768,
    );
  });

  it('models.json that is not an object', () => {
    const e = refusal(write('', '[{"endpoint": "http://x"}]'));
    expect(e).toMatchObject({ code: 'models_not_object', line: 1 });
  });
});

describe('hubDialUrl', () => {
  it('appends /ws', () => {
    expect(hubDialUrl('ws://localhost:8081')).toEqual({ url: 'ws://localhost:8081/ws' });
    expect(hubDialUrl('wss://inference-ws.swanchain.io/')).toEqual({ url: 'wss://inference-ws.swanchain.io/ws' });
    expect(hubDialUrl('ws://h:1/base')).toEqual({ url: 'ws://h:1/base/ws' });
  });

  it('accepts a URL already ending in /ws once, with a warning', () => {
    const r = hubDialUrl('ws://localhost:8081/ws');
    expect(r.url).toBe('ws://localhost:8081/ws');
    expect(r.warning).toMatch(/should not include \/ws/);
    const slash = hubDialUrl('wss://h/ws/');
    expect(slash.url).toBe('wss://h/ws');
    expect(slash.warning).toBeDefined();
  });

  it('does not treat a path that merely ends in "ws" as /ws', () => {
    expect(hubDialUrl('ws://h/news')).toEqual({ url: 'ws://h/news/ws' });
  });
});
