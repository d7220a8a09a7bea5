// The commented config.toml that `swan-provider init` and the desktop's first run write.
export function configTemplate(nodeName: string): string {
  return `# Swan Provider Console / computing-provider configuration.
# The same file works with the Go computing-provider; [Agent] and [Gateway] are ours.

[API]
NodeName = "${nodeName}"            # how this machine is shown on the network

[Inference]
Enable = true
# The addresses Swan Inference gives you. These defaults point at a local dev hub
# ("swan-provider dev-hub --port 8081") so you can try everything on this machine first.
ServiceURL = "http://127.0.0.1:8081"        # HTTP API of Swan Inference (key check)
WebSocketURL = "ws://127.0.0.1:8081"        # without /ws: it is appended automatically
ApiKey = ""                         # your provider key (sk-prov-...); or set INFERENCE_API_KEY
Models = []                         # models to serve; empty = every model in models.json

[Agent]
HeartbeatIntervalSeconds = 30      # as the Go provider
HealthCheckIntervalSeconds = 30
PingIntervalSeconds = 54
ReadTimeoutSeconds = 60
ReconnectMaxBackoffSeconds = 30
Discovery = true                    # probe 127.0.0.1 for vLLM, SGLang, Ollama, llama.cpp, LM Studio, TGI
# EngineHosts = ["http://192.168.1.20:8000"]   # engines on other machines of your LAN

[Gateway]
Enable = false                      # local API for your own apps (swan-provider keys create)
Listen = "127.0.0.1:18080"
`;
}
