// A row of pressed/unpressed buttons that picks one value (a chart's window, a report's span).
export function Segmented<V extends string | number>({
  label,
  options,
  value,
  onChange,
  testIdPrefix,
}: {
  label: string;
  options: ReadonlyArray<{ value: V; label: string }>;
  value: V;
  onChange: (v: V) => void;
  /** Each button's test id is this followed by its value. */
  testIdPrefix: string;
}) {
  return (
    <div className="segmented" role="group" aria-label={label}>
      {options.map((o) => (
        <button key={o.value} type="button" aria-pressed={value === o.value} onClick={() => onChange(o.value)} data-testid={`${testIdPrefix}${o.value}`}>
          {o.label}
        </button>
      ))}
    </div>
  );
}
