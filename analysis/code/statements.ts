/**
 * Statements of C-family source (C#, Java, Kotlin) as orchestration-as-code readers need them:
 * comments blanked with offsets kept, statements split outside parentheses and strings, and the
 * parenthesis matching another. Text scanning, not parsing: enough for builder chains.
 */

/** Comments and directive lines (`#:sdk`, `#if`) blanked (offsets kept), strings untouched. */
export function stripComments(text: string): string {
  return text.replace(
    /"(?:[^"\\\n]|\\.)*"|\/\/[^\n]*|\/\*[\s\S]*?\*\/|^[\uFEFF \t]*#[^\n]*/gm,
    (m) => (m.startsWith('"') ? m : m.replace(/[^\n]/g, ' ')),
  );
}

/** Index just past the parenthesis matching the one at `open`, or -1. */
export function closeParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = /^"(?:[^"\\\n]|\\.)*"/.exec(text.slice(i));
      if (end) i += end[0].length - 1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * Statements with offsets: split at `;` outside parentheses and strings, and at braces outside
 * parentheses (the body of an `if` is statements too; a lambda argument's body stays in its call).
 */
export function statements(text: string): Array<{ start: number; text: string }> {
  const out: Array<{ start: number; text: string }> = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = /^"(?:[^"\\\n]|\\.)*"/.exec(text.slice(i));
      if (end) i += end[0].length - 1;
    } else if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if ((c === ';' || c === '{' || c === '}') && depth === 0) {
      out.push({ start, text: text.slice(start, i) });
      start = i + 1;
    }
  }
  return out;
}
