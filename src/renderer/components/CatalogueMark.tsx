// Whether the network's catalogue knows a model's name. The hub routes only catalogue ids: a model
// announced under another name gets no traffic, so the console says so and, where the name or the
// engine's report says which catalogue model it is, the models.json line that announces it under that id.
import { useState } from 'react';
import type { CatalogueMatchView } from '../../shared/views/snapshot';
import type { ModelState } from '../../shared/types';
import { getBridge } from '../bridge';
import { setModels } from '../store/actions';
import { useStore } from '../store/store';
import { useCall, useFetch } from '../lib/use-call';
import { Card } from './Card';
import { ErrorText } from './Field';

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

/**
 * "Serve my model as…": writes the models.json line that announces the engine's model under a catalogue id
 * (and says where models.json is). The mapping is then checked against what the engine reports like any other:
 * a contradiction holds it back until the owner confirms it (Models).
 */
function ServeAs({ m, initial, ids, onDone }: { m: ModelState; initial: string; ids: string[]; onDone: (text: string) => void }) {
  const [id, setId] = useState(initial);
  const s = slug(m.id);
  const [save, state] = useCall(async () => {
    const r = await getBridge().invoke('models.serveAs', { model: m.id, networkId: id.trim() });
    // Said by the card: this row goes once the model is known by its catalogue id.
    onDone(
      `${r.modelsJson} now announces ${m.endpoints[0]?.localModel ?? m.id} as ${id.trim()}. It is checked against what the engine reports before the hub hears of it.`,
    );
    setModels(r.models);
  });
  return (
    <div className="inline-form small">
      <label htmlFor={`serve-as-${s}`}>Serve my model as</label>
      <input
        id={`serve-as-${s}`}
        list={`catalogue-ids-${s}`}
        value={id}
        onChange={(e) => setId(e.target.value)}
        data-testid={`serve-as-input-${s}`}
        placeholder="a catalogue id"
      />
      <datalist id={`catalogue-ids-${s}`}>
        {ids.map((x) => (
          <option key={x} value={x} />
        ))}
      </datalist>
      <button type="button" className="small-button" disabled={!id.trim() || state.pending} onClick={() => void save()} data-testid={`serve-as-save-${s}`}>
        Serve as this id
      </button>
      <ErrorText error={state.error} testId={`serve-as-error-${s}`} />
    </div>
  );
}

function Row({ m, match, ids, onDone }: { m: ModelState; match: CatalogueMatchView; ids: string[]; onDone: (text: string) => void }) {
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
            {match.matchedId && match.basis
              ? ` (${match.basis === 'metadata' ? 'by what the engine reports' : match.basis === 'id' ? 'the same id in another case' : 'the same model name'})`
              : ''}
          </p>
          <p className="small muted">
            By hand, the models.json line is: <code className="mono">{snippet(m, match.suggestions[0]!)}</code>
          </p>
        </>
      ) : (
        <p className="small muted">
          Neither its name nor what the engine reports about it matches a catalogue model. Serve a model the network lists, or ask Swan Inference to add this
          one.
        </p>
      )}
      <ServeAs m={m} initial={match.suggestions[0] ?? ''} ids={ids} onDone={onDone} />
    </li>
  );
}

/** The Engines page's list of models the catalogue does not know. */
export function CatalogueCard() {
  const catalogue = useStore((s) => s.snapshot?.catalogue);
  const models = useStore((s) => s.snapshot?.models ?? []);
  const ids = useFetch(() => getBridge().invoke('models.catalogueIds', {}), [catalogue?.fetchedAt]);
  const [mapped, setMapped] = useState<string | null>(null);
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
      {mapped && (
        <p className="small" role="status" data-testid="serve-as-done">
          {mapped}
        </p>
      )}
      {unknown.length > 0 && (
        <ul className="plain-list catalogue-list">
          {unknown.map((m) => (
            <Row key={m.id} m={m} match={catalogue.models[m.id]!} ids={ids.data ?? []} onDone={setMapped} />
          ))}
        </ul>
      )}
    </Card>
  );
}
