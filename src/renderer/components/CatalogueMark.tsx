// Whether the network's catalogue knows a model's name. The hub routes only catalogue ids: a model
// announced under another name gets no traffic, so the console says so and, where the name or the
// engine's report says which catalogue model it is, the models.json line that announces it under that id.
import type { CatalogueMatchView } from '../../shared/views/snapshot';
import type { ModelState } from '../../shared/types';
import { useStore } from '../store/store';
import { Card } from './Card';

function slug(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** A short mark beside the model's name in the models table (nothing while the catalogue is unknown). */
export function CatalogueMark({ model }: { model: string }) {
  const m = useStore((s) => s.snapshot?.catalogue?.models[model]);
  if (!m || m.known) return null;
  return (
    <span
      className="badge badge-warn catalogue-mark"
      title={`The network will not route requests for this name.${m.suggestions.length ? ` It ${m.matchedId ? 'is' : 'may be'}: ${m.suggestions.join(', ')}` : ''}`}
      data-testid={`catalogue-unknown-${slug(model)}`}
    >
      not in catalogue
    </span>
  );
}

/** The models.json line that announces the engine's model (its own name in local_model) under a catalogue id. */
function snippet(m: ModelState, id: string): string {
  const endpoint = m.endpoints[0]?.url ?? 'http://127.0.0.1:8000';
  return JSON.stringify({ [id]: { endpoint, local_model: m.endpoints[0]?.localModel ?? m.id } });
}

function Row({ m, match }: { m: ModelState; match: CatalogueMatchView }) {
  const s = slug(m.id);
  return (
    <li data-testid={`catalogue-row-${s}`}>
      <p>
        <span className="mono">{m.id}</span>: the network will not route requests for this name.
      </p>
      {match.suggestions.length > 0 ? (
        <>
          <p className="small">
            {match.matchedId ? 'It is' : 'It may be (the engine reports the same family and size)'}:{' '}
            {match.suggestions.map((id, i) => (
              <span key={id}>
                {i > 0 && ', '}
                <code data-testid={`catalogue-suggestion-${s}`}>{id}</code>
              </span>
            ))}
            {match.matchedId && match.basis ? ` (${match.basis === 'metadata' ? 'by what the engine reports' : match.basis === 'id' ? 'the same id in another case' : 'the same model name'})` : ''}
          </p>
          <p className="small muted">
            To serve it under <code>{match.suggestions[0]}</code>, add to models.json: <code className="mono">{snippet(m, match.suggestions[0]!)}</code>
          </p>
        </>
      ) : (
        <p className="small muted">Neither its name nor what the engine reports about it matches a catalogue model. Serve a model the network lists, or ask Swan Inference to add this one.</p>
      )}
    </li>
  );
}

/** The Engines page's list of models the catalogue does not know. */
export function CatalogueCard() {
  const catalogue = useStore((s) => s.snapshot?.catalogue);
  const models = useStore((s) => s.snapshot?.models ?? []);
  if (!catalogue) return null;
  const unknown = models.filter((m) => catalogue.models[m.id] && !catalogue.models[m.id]!.known);
  // Said only when true: there are models, and the catalogue was checked for every one of them.
  const allKnown = models.length > 0 && models.every((m) => catalogue.models[m.id]?.known === true);
  return (
    <Card title="Network catalogue" testId="catalogue-card">
      {catalogue.state === 'idle' && <p className="muted small">The model catalogue has not been read yet.</p>}
      {catalogue.error && (
        <p className="banner banner-warn small" data-testid="catalogue-error">
          {catalogue.error}
          {catalogue.fetchedAt ? ' The last list read is used meanwhile.' : ''}
        </p>
      )}
      {catalogue.fetchedAt !== undefined && allKnown && (
        <p className="small" data-testid="catalogue-all-known">
          Every model here is in the network&apos;s catalogue ({catalogue.size} models).
        </p>
      )}
      {catalogue.fetchedAt !== undefined && models.length === 0 && <p className="small muted">No model to check against the catalogue yet.</p>}
      {unknown.length > 0 && (
        <ul className="plain-list catalogue-list">
          {unknown.map((m) => (
            <Row key={m.id} m={m} match={catalogue.models[m.id]!} />
          ))}
        </ul>
      )}
    </Card>
  );
}
