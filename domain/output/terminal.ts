/**
 * Text for a terminal. Whatever the CLI prints from the server passes through here: every
 * control character (so every escape sequence: CSI colours and screen clears, OSC 0 window
 * titles, OSC 8 hyperlinks, 8-bit C1 introducers), DEL, unpaired surrogates and bidi overrides
 * are replaced by U+FFFD. The remains of a sequence (`[31m`) stay visible as inert text, so a
 * reader sees that something was there.
 */
import { plainLine, plainText, safeJson } from './plain';

/** Lines of text (a Markdown brief, a log): line breaks and tabs kept, the rest made inert. */
export function terminalText(text: string): string {
  return plainText(text);
}

/** One table cell or `key: value` value: one line, nothing that moves the cursor. */
export function terminalCell(text: string): string {
  return plainLine(text);
}

/** JSON (the --json form) with no control character raw: see safeJson. */
export function terminalJson(value: unknown): string {
  return `${safeJson(value, 2)}\n`;
}
