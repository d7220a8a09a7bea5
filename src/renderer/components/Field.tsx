// A labelled form field with its hint and its error right next to it.
import { useId } from 'react';

export function Field(props: {
  label: string;
  hint?: string;
  error?: string | null;
  children: (id: string, describedBy: string | undefined) => React.ReactNode;
  testId?: string;
}) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errId = props.error ? `${id}-err` : undefined;
  const describedBy = [hintId, errId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${props.error ? ' has-error' : ''}`} data-testid={props.testId}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(id, describedBy)}
      {props.hint && (
        <p className="field-hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p className="field-error" id={errId} role="alert" data-testid={props.testId ? `${props.testId}-error` : undefined}>
          {props.error}
        </p>
      )}
    </div>
  );
}

export function ErrorText({ error, testId }: { error: string | null | undefined; testId?: string }) {
  if (!error) return null;
  return (
    <p className="error-text" role="alert" data-testid={testId}>
      {error}
    </p>
  );
}

/** A short result line after an action ("Added …", "Found 2 engines"), read out by screen readers. */
export function StatusNote({ text, testId }: { text: string | null | undefined; testId?: string }) {
  if (!text) return null;
  return (
    <span className="muted small" role="status" data-testid={testId}>
      {text}
    </span>
  );
}

type InputProps = Omit<React.InputHTMLAttributes<HTMLInputElement>, 'id' | 'aria-describedby' | 'value' | 'onChange'>;

/** The settings row most forms are made of: a Field holding one text input. */
export function TextField({
  label,
  hint,
  error,
  testId,
  inputTestId,
  value,
  onChange,
  ...input
}: {
  label: string;
  hint?: string;
  error?: string | null;
  testId?: string;
  inputTestId?: string;
  value: string;
  onChange: (value: string) => void;
} & InputProps) {
  return (
    <Field label={label} hint={hint} error={error} testId={testId}>
      {(id, d) => <input id={id} aria-describedby={d} value={value} onChange={(e) => onChange(e.target.value)} data-testid={inputTestId} {...input} />}
    </Field>
  );
}
