// What the network asks for and whether this rig could serve it (the Usage page's demand card), and the
// Ollama pulls started from it.

export interface DemandRowView {
  modelId: string;
  inputPerM: number;
  outputPerM: number;
  tier: string;
  /** serving: announced here · on_disk: an engine here has it, switched off (`local`: under the engine's own
   * name, e.g. an Ollama tag) · pullable: an Ollama engine here could pull it · none */
  here: 'serving' | 'on_disk' | 'pullable' | 'none';
  /** The engine model here that is this network model under another name (an Ollama tag on disk). */
  local?: { engineUrl: string; model: string };
  /** GPU memory the network says the model needs (model-demand `min_vram_gb`); null when it does not say. */
  minVramGb: number | null;
  /** The model's size on disk as its engine reports it (Ollama /api/tags `size`, GiB); null when unknown. */
  sizeGb: number | null;
  /** Ollama's details of the model on disk (`parameter_size` "7.6B", `quantization_level` "Q4_K_M"). */
  parameterSize?: string;
  quantization?: string;
  /** Judged from min_vram_gb when the network gives it, else from the size on disk; unknown without either. */
  fits: 'yes' | 'no' | 'unknown';
}

/** tag_not_network_model: the tag typed for the pull is not certainly that network model (qwen2.5:3b
 * for Qwen2.5-7B); mapping_refused: models.json could not take the mapping (the owner's own entry). */
export type PullNotAnnouncedCode = 'tag_not_network_model' | 'mapping_refused';

export interface PullStateView {
  engineUrl: string;
  model: string;
  /** The network model id this pull is for: announced with `model` as its local name once pulled. */
  networkId?: string;
  /** Set when the pulled model is NOT announced under `networkId` (the pull itself still runs): `code`
   * is stable, `text` says what happened and what to do. */
  notAnnounced?: { code: PullNotAnnouncedCode; text: string };
  status: string;
  completed: number;
  total: number;
  done: boolean;
  error?: string;
  startedAt: number;
  finishedAt?: number;
}

export interface DemandView {
  rates: { asOf: number | null; stale: boolean; error?: string };
  rows: DemandRowView[];
  vramGb: number | null;
  /** Ollama engines here that can pull a model. */
  ollamaEngines: string[];
  pulls: PullStateView[];
}
