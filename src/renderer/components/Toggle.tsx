// A real checkbox, styled as a switch: keyboard and screen readers work as usual.
export function Toggle(props: { checked: boolean; onChange: (v: boolean) => void; label: string; hideLabel?: boolean; disabled?: boolean; testId?: string }) {
  return (
    <label className={`toggle${props.disabled ? ' is-disabled' : ''}`}>
      <input
        type="checkbox"
        role="switch"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChange(e.target.checked)}
        data-testid={props.testId}
        aria-label={props.hideLabel ? props.label : undefined}
      />
      <span className="toggle-track" aria-hidden="true" />
      {!props.hideLabel && <span className="toggle-label">{props.label}</span>}
    </label>
  );
}

/** A settings row: the switch, a hint under it, and its error. */
export function ToggleRow(props: {
  checked: boolean;
  onChange: (v: boolean) => void;
  label: string;
  testId?: string;
  hint?: string | null;
  hintTestId?: string;
  error?: string | null;
}) {
  return (
    <>
      <Toggle checked={props.checked} onChange={props.onChange} label={props.label} testId={props.testId} />
      {props.hint && (
        <p className="field-hint" data-testid={props.hintTestId}>
          {props.hint}
        </p>
      )}
      {props.error && <p className="field-error">{props.error}</p>}
    </>
  );
}
