// A button whose call is running: it says what it is doing and cannot be pressed again until the call ends.
import type { ButtonHTMLAttributes } from 'react';

export function BusyButton({ busy, busyLabel, disabled, children, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { busy: boolean; busyLabel: string }) {
  return (
    <button type="button" {...rest} disabled={busy || disabled}>
      {busy ? busyLabel : children}
    </button>
  );
}
