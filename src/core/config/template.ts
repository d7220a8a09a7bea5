// The commented config.toml that `swan-provider init`, `npm start`'s first run and the desktop's
// first run write. It points at Swan Inference mainnet unless told otherwise; `demo` and the docs'
// local walkthrough use the dev hub instead.
import { LOCAL_DEV_HUB, NETWORKS, PROVIDER_DASHBOARD_URL, type NetworkAddresses } from '../../shared/networks';

export type TemplateNetwork = 'mainnet' | 'testnet' | 'local';

export function networkAddresses(network: TemplateNetwork): NetworkAddresses {
  return network === 'local' ? LOCAL_DEV_HUB : NETWORKS[network];
}

const q = (s: string) => JSON.stringify(s);

export function configTemplate(nodeName: string, o: { network?: TemplateNetwork; engineHosts?: string[] } = {}): string {
  const net = networkAddresses(o.network ?? 'mainnet');
  const hosts = o.engineHosts ?? [];
  return `# Swan Provider Console / computing-provider configuration.
# The same file works with the Go computing-provider; [Agent] and [Gateway] are ours.

[API]
NodeName = ${q(nodeName)}            # how this machine is shown on the network

[Inference]
Enable = true
# Which Swan Inference network to serve (the console's Settings and onboarding can change it):
#   mainnet  WebSocketURL = "${NETWORKS.mainnet.hubUrl}"       ServiceURL = "${NETWORKS.mainnet.serviceUrl}"
#   testnet  WebSocketURL = "${NETWORKS.testnet.hubUrl}"   ServiceURL = "${NETWORKS.testnet.serviceUrl}"
#   local    WebSocketURL = "${LOCAL_DEV_HUB.hubUrl}"                  ServiceURL = "${LOCAL_DEV_HUB.serviceUrl}"   (swan-provider dev-hub)
WebSocketURL = ${q(net.hubUrl)}     # without /ws: it is appended automatically
ServiceURL = ${q(net.serviceUrl)}        # HTTP API of the hub (key check, provider status)
ApiKey = ""                         # your provider key, from ${PROVIDER_DASHBOARD_URL}; or set INFERENCE_API_KEY
Models = []                         # models to serve; empty = every model in models.json

[Agent]
HeartbeatIntervalSeconds = 30      # as the Go provider
HealthCheckIntervalSeconds = 30
PingIntervalSeconds = 54
ReadTimeoutSeconds = 60
ReconnectMaxBackoffSeconds = 30
Discovery = true                    # probe 127.0.0.1 for vLLM, SGLang, Ollama, llama.cpp, LM Studio, TGI
${hosts.length ? `EngineHosts = ${JSON.stringify(hosts)}` : '# EngineHosts = ["http://192.168.1.20:8000"]'}   # engines on other machines of your LAN

[Gateway]
Enable = false                      # local API for your own apps (swan-provider keys create)
Listen = "127.0.0.1:18080"
`;
}
