// Text from outside (hub error texts, engine versions and model ids, log messages) printed to the
// owner's terminal: escape sequences (ESC [ … m, OSC window titles, DCS …), other C0/C1 control
// characters, DEL and bidirectional overrides are removed, so nothing received can retitle the window,
// clear the screen, move the cursor or reorder what is shown. Newlines and tabs stay. The one helper for
// every terminal writer (log lines, usage, engines, doctor).
const CONTROL =
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[^[\]PX^_]?|\x9b[0-?]*[ -/]*[@-~]?|\x9d[^\x07\x9c]*[\x07\x9c]?|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function forTerminal(text: string): string {
  return text.replace(CONTROL, '');
}

/**
 * forTerminal for one line that holds text from outside (a log line): its line breaks are shown as `\n`,
 * so a hub's or an engine's string cannot start a line of its own (a forged "console: http://…" link, a
 * fake "approve" prompt). Tabs become spaces.
 */
export function forTerminalLine(text: string): string {
  return forTerminal(text)
    .replace(/\r\n|[\r\n\u2028\u2029\u0085]/g, '\\n')
    .replace(/\t/g, ' ');
}

/** forTerminal for text whose lines end in CRLF (CSV): the CR of each line end stays. */
export function forTerminalLines(text: string): string {
  return text.split('\r\n').map(forTerminal).join('\r\n');
}

/** A writable that passes everything written through forTerminal (for command output streams). */
export function terminalWriter(out: NodeJS.WritableStream): { write(s: string): boolean } {
  return { write: (s: string) => out.write(forTerminal(s)) };
}
