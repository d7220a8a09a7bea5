// Prices the owner charges, per model, per 1M input / output tokens. A change is a new row (the
// ledger keeps the history), so earnings already made keep the price they were made at.
import { useState } from 'react';
import type { PricesView } from '../../shared/views/usage';
import { getBridge } from '../bridge';
import { Card } from './Card';
import { ErrorText, Field, TextField } from './Field';
import { fmtDateTime, fmtMoney } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { DataTable } from './DataTable';
import { BusyButton } from './BusyButton';

function parsePrice(text: string): number | null {
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(n) && n >= 0 && n <= 1_000_000 ? n : null;
}

export function PricesCard({ models }: { models: string[] }) {
  const list = useFetch(() => getBridge().invoke('prices.list', {}), []);
  const [view, setView] = useState<PricesView | undefined>(undefined);
  const current = view ?? list.data;
  const [model, setModel] = useState('*');
  const [input, setInput] = useState('');
  const [output, setOutput] = useState('');
  const [errors, setErrors] = useState<{ input?: string; output?: string }>({});
  const [save, saveState] = useCall(async () => {
    const inputPerM = parsePrice(input);
    const outputPerM = parsePrice(output);
    const e = {
      ...(inputPerM === null ? { input: 'Enter a price of 0 or more, e.g. 0.10' } : {}),
      ...(outputPerM === null ? { output: 'Enter a price of 0 or more, e.g. 0.30' } : {}),
    };
    setErrors(e);
    if (inputPerM === null || outputPerM === null) return;
    setView(await getBridge().invoke('prices.set', { model, inputPerM, outputPerM }));
    setInput('');
    setOutput('');
  });
  return (
    <Card title="Your own prices (estimates)" testId="prices">
      <p className="muted" data-testid="earnings-enabled">
        {current?.earningsEnabled
          ? 'The hub has earnings enabled for this provider. Served hub requests earn at the network’s rates; the prices below are your estimate, used only for models the network does not price.'
          : 'The hub has not enabled earnings for this provider yet: requests are counted, earnings stay at $0 until it does.'}
      </p>
      {current && current.prices.length > 0 ? (
        <DataTable
          testId="prices-table"
          columns={[{ label: 'Model' }, { label: 'Input / 1M tokens', num: true }, { label: 'Output / 1M tokens', num: true }, { label: 'Since' }]}
        >
          {current.prices.map((p) => (
            <tr key={p.model}>
              <th scope="row" className="mono">
                {p.model === '*' ? 'Every other model' : p.model}
              </th>
              <td className="num">{fmtMoney(p.inputPerM)}</td>
              <td className="num">{fmtMoney(p.outputPerM)}</td>
              <td>{fmtDateTime(p.effectiveFrom)}</td>
            </tr>
          ))}
        </DataTable>
      ) : (
        <p className="empty">No estimates set: models the network does not price earn nothing here.</p>
      )}
      <form
        className="inline-form"
        onSubmit={(ev) => {
          ev.preventDefault();
          void save();
        }}
      >
        <Field label="Model">
          {(id) => (
            <select id={id} value={model} onChange={(e) => setModel(e.target.value)} data-testid="price-model">
              <option value="*">Every other model</option>
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          )}
        </Field>
        <TextField
          label="Input, $ per 1M tokens"
          error={errors.input ?? null}
          testId="price-input-field"
          inputMode="decimal"
          value={input}
          onChange={setInput}
          inputTestId="price-input"
        />
        <TextField
          label="Output, $ per 1M tokens"
          error={errors.output ?? null}
          testId="price-output-field"
          inputMode="decimal"
          value={output}
          onChange={setOutput}
          inputTestId="price-output"
        />
        <BusyButton type="submit" data-testid="price-save" busy={saveState.pending} busyLabel="Saving…">
          Set price
        </BusyButton>
      </form>
      <ErrorText error={list.error ?? saveState.error} />
    </Card>
  );
}
