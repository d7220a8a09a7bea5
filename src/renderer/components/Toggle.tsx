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
