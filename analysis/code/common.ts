/**
 * Helpers shared by the code analyzers: which paths are skipped or tests, a small comment/string
 * lexer, languages, and the final order of their evidence.
 *
 * The lexer is deliberately simple (hand-written, character based, no parser dependency): it
 * knows line and block comments, quoted strings, JS template literals (with `${...}` nesting),
 * JS regex literals (by the usual "previous token" heuristic), Go raw strings, Rust char literals
 * vs lifetimes, and Python triple-quoted strings. That is enough to keep commented-out imports,
 * doc links and example code in docstrings out of the evidence; it is not a full tokenizer.
 */
import { compareEvidence, type Evidence } from '../evidence';
import { basename, dirname } from '../shared/paths';

// ---------------------------------------------------------------------------------------------
// Paths

/** Directories never analyzed: dependencies, build output, tool caches and virtualenvs. */
export const SKIP_DIRS = new Set([
  'node_modules',
  'bower_components',
  'vendor',
  '.git',
  'dist',
  'build',
  'target',
  '.venv',
  'venv',
  '__pycache__',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  '.next',
  '.nuxt',
  '.gradle',
  'coverage',
]);

export function isSkippedPath(path: string): boolean {
  const segs = path.split('/');
  segs.pop();
  return segs.some((s) => SKIP_DIRS.has(s));
}

const TEST_DIR =
  /(^|\/)(test|tests|__tests__|spec|specs|testdata|test-data|fixtures?|__mocks__|e2e|testing)(\/|$)/i;
const TEST_FILE =
  /(\.(test|spec)\.[a-z0-9]+$)|(_test\.go$)|(^test_[^/]*\.py$)|(_test\.py$)|(^conftest\.py$)|((Test|Tests|IT)\.(java|kt|cs)$)/;

/** Paths that look like tests or test fixtures. */
export function isTestPath(path: string): boolean {
  return TEST_DIR.test(dirname(path)) || TEST_FILE.test(basename(path));
}

// ---------------------------------------------------------------------------------------------
// Lexer

/** Per-character classes in `Lexed.mask`. */
export const CODE = 0;
export const STRING = 1;
export const COMMENT = 2;

export interface Lexed {
  /** The text with every comment character (but line breaks) replaced by a space. */
  code: string;
  /** CODE / STRING / COMMENT per character of the text. */
  mask: Uint8Array;
}

export type LexStyle =
  | 'js'
  | 'c'
  | 'go'
  | 'rust'
  | 'python'
  | 'ruby'
  | 'json'
  /** '#' comments at line start or after whitespace; quotes respected (YAML, TOML, .env). */
  | 'hash'
  /** '#' / '!' comments only at line start (Dockerfile, .properties, INI ';'). */
  | 'hash-start'
  | 'none';

function buildCode(text: string, mask: Uint8Array): string {
  const parts: string[] = [];
  const n = text.length;
  let runStart = 0;
  let i = mask.indexOf(COMMENT);
  while (i >= 0) {
    let j = i;
    while (j < n && mask[j] === COMMENT) j++;
    parts.push(
      text.slice(runStart, i),
      text.slice(i, j).replace(/[^\n\r]+/g, (m) => ' '.repeat(m.length)),
    );
    runStart = j;
    i = j < n ? mask.indexOf(COMMENT, j) : -1;
  }
  parts.push(text.slice(runStart));
  return parts.join('');
}

function fill(mask: Uint8Array, from: number, to: number, v: number): void {
  mask.fill(v, from, Math.min(to, mask.length));
}

/** End (exclusive) of a quoted string starting at `i` (the quote); stops at an unescaped newline. */
function scanQuoted(text: string, i: number, quote: string, multiline = false): number {
  let j = i + 1;
  while (j < text.length) {
    const ch = text[j];
    if (ch === '\\') {
      j += 2;
      continue;
    }
    if (ch === quote) return j + 1;
    if (ch === '\n' && !multiline) return j;
    j++;
  }
  return text.length;
}

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}

function isSpace(c: number): boolean {
  return (
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 13 ||
    c === 11 ||
    c === 12 ||
    c === 0xa0 ||
    c === 0xfeff
  );
}

const REGEX_PREFIX_WORDS = new Set([
  'return',
  'typeof',
  'case',
  'in',
  'of',
  'delete',
  'void',
  'throw',
  'new',
  'instanceof',
  'yield',
  'await',
  'else',
  'do',
]);

function lexCLike(text: string, style: 'js' | 'c' | 'go' | 'rust' | 'json'): Uint8Array {
  const n = text.length;
  const mask = new Uint8Array(n);
  const js = style === 'js';
  // JS template literal nesting: brace depths at which a `${` was opened.
  const templateStack: number[] = [];
  let braceDepth = 0;
  let lastSig = ''; // last significant code character
  let lastWord = '';
  let i = 0;

  const scanTemplate = (start: number): number => {
    // `start` is just after '`' or after the '}' closing a substitution.
    let j = start;
    while (j < n) {
      const ch = text[j];
      if (ch === '\\') {
        j += 2;
        continue;
      }
      if (ch === '`') {
        fill(mask, start, j + 1, STRING);
        lastSig = '`';
        return j + 1;
      }
      if (ch === '$' && text[j + 1] === '{') {
        fill(mask, start, j + 2, STRING);
        templateStack.push(braceDepth);
        braceDepth++;
        lastSig = '{';
        return j + 2;
      }
      j++;
    }
    fill(mask, start, n, STRING);
    return n;
  };

  while (i < n) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (ch === '/' && next === '/') {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      fill(mask, i, end, COMMENT);
      i = end;
      continue;
    }
    if (ch === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      const end = close < 0 ? n : close + 2;
      fill(mask, i, end, COMMENT);
      i = end;
      continue;
    }
    if (ch === '"' || ch === "'") {
      if (style === 'rust' && ch === "'") {
        const m = /^'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'/.exec(
          text.slice(i, i + 12),
        );
        if (!m) {
          i++; // a lifetime or label
          continue;
        }
        fill(mask, i, i + m[0].length, STRING);
        i += m[0].length;
        lastSig = "'";
        continue;
      }
      const end = scanQuoted(text, i, ch);
      fill(mask, i, end, STRING);
      i = end;
      lastSig = ch;
      continue;
    }
    if (ch === '`') {
      if (js) {
        mask[i] = STRING;
        i = scanTemplate(i + 1);
        continue;
      }
      if (style === 'go') {
        const close = text.indexOf('`', i + 1);
        const end = close < 0 ? n : close + 1;
        fill(mask, i, end, STRING);
        i = end;
        lastSig = '`';
        continue;
      }
    }
    if (js && ch === '/') {
      const regexAllowed =
        lastSig === '' ||
        '(,=:[!&|?{};+-*%<>~^'.includes(lastSig) ||
        REGEX_PREFIX_WORDS.has(lastWord);
      if (regexAllowed) {
        let j = i + 1;
        let inClass = false;
        while (j < n && text[j] !== '\n') {
          const c = text[j];
          if (c === '\\') {
            j += 2;
            continue;
          }
          if (c === '[') inClass = true;
          else if (c === ']') inClass = false;
          else if (c === '/' && !inClass) break;
          j++;
        }
        if (j < n && text[j] === '/') {
          let end = j + 1;
          while (end < n && /[a-z]/i.test(text[end] as string)) end++;
          fill(mask, i, end, STRING);
          i = end;
          lastSig = ')';
          lastWord = '';
          continue;
        }
      }
    }
    if (js && ch === '{') braceDepth++;
    if (js && ch === '}') {
      if (templateStack.length > 0 && templateStack[templateStack.length - 1] === braceDepth - 1) {
        templateStack.pop();
        braceDepth--;
        mask[i] = STRING;
        i = scanTemplate(i + 1);
        continue;
      }
      braceDepth = Math.max(0, braceDepth - 1);
    }
    if (isIdentStart(ch.charCodeAt(0))) {
      let j = i + 1;
      while (j < n && isIdentPart(text.charCodeAt(j))) j++;
      lastWord = text.slice(i, j);
      lastSig = 'a';
      i = j;
      continue;
    }
    if (!isSpace(ch.charCodeAt(0))) {
      lastSig = ch;
      lastWord = '';
    }
    i++;
  }
  return mask;
}

function lexPython(text: string, ruby: boolean): Uint8Array {
  const n = text.length;
  const mask = new Uint8Array(n);
  let i = 0;
  while (i < n) {
    const ch = text[i];
    if (ch === '#') {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      fill(mask, i, end, COMMENT);
      i = end;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const q = ch + ch + ch;
      const triple = !ruby && text.startsWith(q, i);
      if (triple) {
        let end = n;
        let j = i + 3;
        for (;;) {
          const k = text.indexOf(q, j);
          if (k < 0) break;
          let backslashes = 0;
          for (let b = k - 1; b >= i + 3 && text[b] === '\\'; b--) backslashes++;
          if (backslashes % 2 === 0) {
            end = k + 3;
            break;
          }
          j = k + 1;
        }
        // A triple-quoted string alone at the start of its line is a docstring: documentation,
        // masked like a comment (its examples and links are not the program's behaviour).
        const lineStart = text.lastIndexOf('\n', i - 1) + 1;
        const docstring = /^[ \t]*[rRuUbB]?$/.test(text.slice(lineStart, i));
        fill(mask, i, end, docstring ? COMMENT : STRING);
        i = end;
        continue;
      }
      const end = scanQuoted(text, i, ch, ruby);
      fill(mask, i, end, STRING);
      i = end;
      continue;
    }
    i++;
  }
  return mask;
}

function lexHash(text: string, inline: boolean, extraStart: string): Uint8Array {
  const n = text.length;
  const mask = new Uint8Array(n);
  let lineStart = true;
  let quote: string | null = null;
  for (let i = 0; i < n; i++) {
    const ch = text[i] as string;
    if (ch === '\n') {
      lineStart = true;
      quote = null;
      continue;
    }
    if (quote) {
      mask[i] = STRING;
      if (ch === '\\' && quote === '"') {
        mask[i + 1] = STRING;
        i++;
      } else if (ch === quote) quote = null;
      continue;
    }
    const atStart = lineStart && (ch === '#' || extraStart.includes(ch));
    const inlineComment = inline && ch === '#' && (i === 0 || /\s/.test(text[i - 1] as string));
    if (atStart || (!lineStart && inlineComment)) {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      fill(mask, i, end, COMMENT);
      i = end - 1;
      continue;
    }
    if (inline && (ch === '"' || ch === "'")) {
      // Only quotes that open a value (after '=', ':', '[', ',', whitespace or line start).
      const prev = i === 0 ? '\n' : (text[i - 1] as string);
      if (/[\s=:[,({]/.test(prev)) {
        quote = ch;
        mask[i] = STRING;
      }
    }
    if (!/\s/.test(ch)) lineStart = false;
  }
  return mask;
}

/** Masks comments (and marks strings) of `text` in the given style. */
export function lex(text: string, style: LexStyle): Lexed {
  let mask: Uint8Array;
  switch (style) {
    case 'js':
    case 'c':
    case 'go':
    case 'rust':
    case 'json':
      mask = lexCLike(text, style);
      break;
    case 'python':
      mask = lexPython(text, false);
      break;
    case 'ruby':
      mask = lexPython(text, true);
      break;
    case 'hash':
      mask = lexHash(text, true, '');
      break;
    case 'hash-start':
      mask = lexHash(text, false, '!;');
      break;
    default:
      mask = new Uint8Array(text.length);
  }
  return { code: buildCode(text, mask), mask };
}

// ---------------------------------------------------------------------------------------------
// Languages

export type Language =
  'typescript' | 'javascript' | 'go' | 'python' | 'java' | 'kotlin' | 'csharp' | 'rust' | 'ruby';

const LANGUAGE_BY_EXT: Record<string, Language> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  go: 'go',
  py: 'python',
  java: 'java',
  kt: 'kotlin',
  kts: 'kotlin',
  cs: 'csharp',
  rs: 'rust',
  rb: 'ruby',
};

export function languageOf(path: string): Language | null {
  const base = basename(path);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return null;
  return LANGUAGE_BY_EXT[base.slice(dot + 1).toLowerCase()] ?? null;
}

export function lexStyleOf(lang: Language): LexStyle {
  switch (lang) {
    case 'typescript':
    case 'javascript':
      return 'js';
    case 'go':
      return 'go';
    case 'python':
      return 'python';
    case 'ruby':
      return 'ruby';
    case 'rust':
      return 'rust';
    default:
      return 'c';
  }
}

// ---------------------------------------------------------------------------------------------
// Evidence

/** Sorts evidence and drops exact duplicates (same citation, kind, subject, object, attributes). */
export function finalizeEvidence(list: Evidence[]): Evidence[] {
  const sorted = [...list].sort(compareEvidence);
  const out: Evidence[] = [];
  for (const e of sorted) {
    const prev = out[out.length - 1];
    if (prev && compareEvidence(prev, e) === 0) continue;
    out.push(e);
  }
  return out;
}
