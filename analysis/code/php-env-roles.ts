/**
 * The role of an environment read in PHP, from where its value goes (docs/decisions.md, issue 23,
 * session 13). A read whose value only joins a list of host names the code tests membership in
 * (`$localHosts[] = $host; ... in_array($hostname, $localHosts)`) or a list named for a role
 * (`$allowedHosts = [..., getenv('X')]`, `'trusted_hosts' => [env('X')]`) is an address the
 * unit recognises, never one it calls. Anything else (a URL built from it, a client given it, a
 * use not read here) leaves the read without a role: a call, as before.
 */
import { addressRole } from './address-roles';

/** A list variable used only to collect names and test membership, or one named for a role. */
function listRole(code: string, variable: string): string | null {
  const named = addressRole(variable, false);
  if (named !== null) return named;
  const v = variable.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const uses = [...code.matchAll(new RegExp(`\\$${v}\\b`, 'g'))];
  let tested = false;
  for (const u of uses) {
    const at = u.index ?? 0;
    const before = code.slice(Math.max(0, at - 200), at);
    const after = code.slice(at + u[0].length, at + u[0].length + 4);
    if (/\bin_array\(\s*[^;()]*(?:\([^;()]*\)[^;()]*)*,\s*$/.test(before)) tested = true;
    else if (!/^\s*(\[\s*\]\s*)?=(?!=)/.test(after)) return null;
  }
  return tested ? 'allow-list' : null;
}

/** The name before an array literal opened at `open`: `'key' =>`, `$var =`, past wrapping calls. */
function arrayOwner(code: string, open: number): { name: string; variable: boolean } | null {
  let before = code.slice(Math.max(0, open - 300), open);
  if (/\barray\s*$/.test(before)) before = before.replace(/\barray\s*$/, '');
  // `array_filter(array_unique([`: calls that keep the list a list.
  while (/\b(?:array_\w+|\\?\w*unique|\\?\w*filter)\s*\(\s*$/.test(before))
    before = before.replace(/\\?\w+\s*\(\s*$/, '');
  const variable = /\$(\w+)\s*=\s*$/.exec(before);
  if (variable && !/[=!<>]\s*=\s*$/.test(before.slice(0, -1)))
    return { name: variable[1] ?? '', variable: true };
  const key = /(['"])([\w.-]+)\1\s*=>\s*$/.exec(before);
  return key ? { name: key[2] ?? '', variable: false } : null;
}

/** The role of an expression at [start, end) when it is an element of a list with a role. */
function elementRole(code: string, start: number, end: number): string | null {
  if (!/(?:\[|\(|,)\s*$/.test(code.slice(Math.max(0, start - 80), start))) return null;
  if (!/^\s*(?:,|\]|\))/.test(code.slice(end, end + 80))) return null;
  // The opener of the enclosing list: the unmatched `[` or `array(` before the expression.
  let depth = 0;
  for (let i = start - 1; i >= 0 && start - i < 4000; i--) {
    const c = code[i];
    if (c === ']' || c === ')') depth++;
    else if (c === '[' || c === '(') {
      if (depth > 0) {
        depth--;
        continue;
      }
      if (c === '(' && !/\barray\s*$/.test(code.slice(Math.max(0, i - 10), i))) return null;
      const owner = arrayOwner(code, i);
      if (!owner) return null;
      return owner.variable ? listRole(code, owner.name) : addressRole(owner.name, false);
    } else if (c === ';' || c === '{' || c === '}') return null;
  }
  return null;
}

/** The role of an environment read at [start, end) in PHP code, or null when it may be a call. */
export function phpReadRole(code: string, start: number, end: number): string | null {
  const direct = elementRole(code, start, end);
  if (direct !== null) return direct;
  // `$host = getenv('X');`: every later use of `$host` decides.
  const assigned = /\$(\w+)\s*=\s*$/.exec(code.slice(Math.max(0, start - 120), start));
  if (!assigned || !/^\s*;/.test(code.slice(end, end + 20))) return null;
  const variable = assigned[1] ?? '';
  let role: string | null = null;
  for (const u of code.slice(end).matchAll(new RegExp(`\\$${variable}\\b`, 'g'))) {
    const at = end + (u.index ?? 0);
    const to = at + u[0].length;
    const before = code.slice(Math.max(0, at - 40), at);
    const after = code.slice(to, to + 80);
    if (/\b(?:empty|isset|is_null)\s*\(\s*$/.test(before) && /^\s*\)/.test(after)) continue;
    // `$list[] = $host;` or `$list[] = $host . ':' . $port;`
    const appended = /\$(\w+)\s*\[\s*\]\s*=\s*$/.exec(before);
    if (appended && /^\s*(?:;|\.\s*['"][^'"\n]*['"]\s*\.\s*\$[\w>()-]+\s*;)/.test(after)) {
      const r = listRole(code, appended[1] ?? '');
      if (r === null) return null;
      role = r;
      continue;
    }
    const r = elementRole(code, at, to);
    if (r === null) return null;
    role = r;
  }
  return role;
}
