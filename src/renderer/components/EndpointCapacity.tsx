// Per endpoint: what it can take at once and where that figure comes from (the engine's own word, the
// config, or the default), its state (a model loading is amber, a refused key red), and which engine
// model the announced id maps to (edit the mapping in models.json; edits apply live).
import type { EndpointState, ModelState } from '../../shared/types';
import { Badge, HealthBadge } from './Badge';
import { modelSlug } from './ModelsTable';
import { DataTable, ModelCell } from './DataTable';
import { fmtTime } from '../../shared/dates';

const CONDITION: Record<NonNullable<EndpointState['condition']>, { tone: 'warn' | 'bad'; label: string }> = {
  loading: { tone: 'warn', label: 'loading' },
  key_rejected: { tone: 'bad', label: 'engine refuses our key' },
  down: { tone: 'bad', label: 'not running' },
  no_response: { tone: 'bad', label: 'no response to a 1-token chat' },
  engine_error: { tone: 'bad', label: 'engine error on a 1-token chat' },
  not_served: { tone: 'bad', label: 'model not served here' },
};

/** The deep health check, in a few words: when the engine last answered a real 1-token chat for this model. */
function DeepCheck({ ep, id }: { ep: EndpointState; id: string }) {
  if (ep.deepCheckSkipped)
    return (
      <div className="muted small" data-testid={`endpoint-deep-${id}`}>
        not probed with chat (not a chat model)
      </div>
    );
  const d = ep.deepCheck;
  if (!d) return null;
  const when = fmtTime(d.at);
  return (
    <div className="muted small" data-testid={`endpoint-deep-${id}`} data-deep={d.ok ? 'ok' : d.code}>
      {d.ok ? `answered a 1-token chat at ${when}` : `1-token chat failed at ${when}`}
    </div>
  );
}

function EndpointRow({ model, ep }: { model: ModelState; ep: EndpointState }) {
  const c = ep.condition ? CONDITION[ep.condition] : undefined;
  const id = `${modelSlug(model.id)}-${modelSlug(ep.url)}`;
  return (
    <tr data-testid={`endpoint-capacity-${id}`}>
      <ModelCell model={model.id}>{ep.localModel && <div className="muted small">engine model: {ep.localModel}</div>}</ModelCell>
      <td className="mono">{ep.url}</td>
      <td>
        {c ? (
          <Badge tone={c.tone} testId={`endpoint-condition-${id}`}>
            {c.label}
          </Badge>
        ) : (
          <HealthBadge health={ep.health} />
        )}
        {ep.lastError && <div className="muted small">{ep.lastError}</div>}
        <DeepCheck ep={ep} id={id} />
      </td>
      <td data-testid={`endpoint-slots-${id}`}>
        {ep.inFlight} / {ep.maxConcurrent}
        {ep.capacitySource && <div className="muted small">{ep.capacitySource}</div>}
      </td>
    </tr>
  );
}

export function EndpointCapacity({ models }: { models: ModelState[] }) {
  const rows = models.flatMap((m) => m.endpoints.map((ep) => ({ m, ep })));
  if (rows.length === 0) return <p className="empty">No endpoints yet.</p>;
  return (
    <>
      <DataTable testId="endpoint-capacity" columns={[{ label: 'Model' }, { label: 'Endpoint' }, { label: 'State' }, { label: 'Running / at once' }]}>
        {rows.map(({ m, ep }) => (
          <EndpointRow key={`${m.id} ${ep.url}`} model={m} ep={ep} />
        ))}
      </DataTable>
      <p className="muted small">
        Requests beyond an engine&apos;s slots wait in this provider&apos;s queue. Set MaxConcurrentPerEndpoint in config.toml to override; rename models or map
        them to engine models in models.json (changes apply without a restart).
      </p>
    </>
  );
}
