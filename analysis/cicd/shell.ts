/**
 * Shell words for the command recognisers (commands.ts): a small tokenizer, not a shell.
 * Quotes, `\` continuations, `${{ }}`, `$( )`, `${ }` and command separators are handled;
 * heredocs, functions and control flow are not.
 */
import { expandVariables } from '../shared/variables';

export type OpKind = 'image-build' | 'image-push' | 'deploy' | 'publish';

export interface Op {
  kind: OpKind;
  /** docker, kubectl, helm, terraform, aws-ecs, gcloud-run, az-webapp, npm, github-pages... */
  tool: string;
  /** The verb as written: `build`, `push`, `set image`, `upgrade --install`, `apply`... */
  action: string;
  /** Raw image reference (built, pushed or rolled out). */
  image?: string;
  /** Deployment, release, service or app name when the command names one. */
  target?: string;
  target_type?: string;
  detail?: Record<string, unknown>;
  /** 0-based line of the script where the command starts, and how many lines it spans. */
  line: number;
  line_count: number;
}

export interface Command {
  words: string[];
  line: number;
  line_count: number;
}

/** Splits a script into simple commands (words already unquoted). */
export function splitCommands(script: string): Command[] {
  const out: Command[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let line = 0;
  let cmdLine = 0;
  let cmdEnd = 0;
  const endWord = (): void => {
    if (word !== null) {
      if (words.length === 0) cmdLine = line;
      words.push(word);
      cmdEnd = line;
    }
    word = null;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) out.push({ words, line: cmdLine, line_count: cmdEnd - cmdLine + 1 });
    words = [];
  };
  const readUntil = (start: number, close: string): number => {
    const j = script.indexOf(close, start);
    return j < 0 ? script.length : j + close.length;
  };
  let i = 0;
  while (i < script.length) {
    const c = script[i] ?? '';
    const next = script[i + 1] ?? '';
    if (c === '\\' && next === '\n') {
      line++;
      i += 2;
      continue;
    }
    if (c === '\\' && next !== '') {
      word = (word ?? '') + next;
      i += 2;
      continue;
    }
    if (c === '\n') {
      endCommand();
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      endWord();
      i++;
      continue;
    }
    if (c === '#' && word === null) {
      i = readUntil(i, '\n') - 1;
      if (script[i] !== '\n') i = script.length;
      continue;
    }
    if (c === ';' || c === '|' || c === '&') {
      endCommand();
      i += (c === '|' || c === '&') && next === c ? 2 : 1;
      continue;
    }
    if (c === "'" || c === '"') {
      const j = c === "'" ? readUntil(i + 1, "'") : closingDoubleQuote(script, i + 1);
      const body = script.slice(i + 1, j - 1);
      line += countNewlines(body);
      word = (word ?? '') + (c === '"' ? body.replace(/\\(["\\$`])/g, '$1') : body);
      i = j;
      continue;
    }
    if (c === '$' && next === '{' && script[i + 2] === '{') {
      const j = readUntil(i, '}}');
      word = (word ?? '') + script.slice(i, j);
      i = j;
      continue;
    }
    if (c === '$' && (next === '(' || next === '{')) {
      const j = balanced(script, i + 1);
      const body = script.slice(i, j);
      line += countNewlines(body);
      word = (word ?? '') + body;
      i = j;
      continue;
    }
    word = (word ?? '') + c;
    i++;
  }
  endCommand();
  return out;
}

function countNewlines(s: string): number {
  let n = 0;
  for (const ch of s) if (ch === '\n') n++;
  return n;
}

function closingDoubleQuote(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i + 1;
  }
  return s.length;
}

function balanced(s: string, open: number): number {
  const o = s[open];
  const c = o === '(' ? ')' : '}';
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === o) depth++;
    else if (s[i] === c && --depth === 0) return i + 1;
  }
  return s.length;
}

export interface Args {
  positional: string[];
  flags: Map<string, string[]>;
}

/** Flags in `valueFlags` take the next word (or `=value`); any other flag is boolean. */
export function parseArgs(words: string[], valueFlags: ReadonlySet<string>): Args {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (k: string, v: string): void => {
    flags.set(k, [...(flags.get(k) ?? []), v]);
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (w === '--') {
      positional.push(...words.slice(i + 1));
      break;
    }
    if (w.startsWith('-') && w.length > 1) {
      const eq = w.indexOf('=');
      if (eq > 0) add(w.slice(0, eq), w.slice(eq + 1));
      else if (valueFlags.has(w) && i + 1 < words.length) add(w, words[++i] ?? '');
      else add(w, 'true');
    } else positional.push(w);
  }
  return { positional, flags };
}

export function flag(a: Args, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = a.flags.get(n);
    if (v && v.length > 0) return v[v.length - 1];
  }
  return undefined;
}

export function flagAll(a: Args, ...names: string[]): string[] {
  return names.flatMap((n) => a.flags.get(n) ?? []);
}

/**
 * Replaces `${{ env.X }}`, Azure `$(X)` and shell `$X`, `${X}`, `${X:-default}`... with known
 * literal values; an unknown variable's default applies, and without one it stays as written.
 */
export function substitute(word: string, vars: Readonly<Record<string, string>>): string {
  const known = (n: string): string | undefined => (Object.hasOwn(vars, n) ? vars[n] : undefined);
  const ci = word
    .replace(/\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (m, n: string) => known(n) ?? m)
    .replace(/\$\(([A-Za-z_][A-Za-z0-9_.]*)\)/g, (m, n: string) => known(n) ?? m);
  return expandVariables(ci, known);
}
