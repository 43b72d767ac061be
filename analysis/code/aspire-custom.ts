/**
 * Two readings the Aspire AppHost reader (aspire.ts) takes from the repository's own C# code
 * (docs/decisions.md, "Aspire: resources of the repository's own hosting extensions, emulated
 * storage and addresses handed for redirects", issue 23, session 15):
 * - `customResources`: the `Add{Resource}` extension methods an AppHost defines for itself
 *   (Aspire's documented pattern for a custom hosting integration: a resource type and an
 *   `IDistributedApplicationBuilder` extension `Add{Resource}(this builder, string name, ...)`).
 *   A method returning `IResourceBuilder<T>` where T is (or derives from) `ContainerResource`,
 *   `ExecutableResource` or `ProjectResource` adds a resource named by its first argument: a
 *   running unit. Its container image (`.WithImage("acme/model-server")` in the method's body) says
 *   whether it is a datastore or broker, as for `AddContainer`.
 * - `configReadRoles`: where a .NET unit's code reads a configuration key
 *   (`configuration["X"]`, `GetValue<T>("X")`, `GetSection("X")`, `GetConnectionString("X")`,
 *   `Environment.GetEnvironmentVariable("X")`) and, for each read, the role of the member its
 *   value is assigned to (`RedirectUris = { $"{configuration["X"]}/signin-oidc" }` is a
 *   redirect: analysis/code/address-roles.ts). An address the AppHost hands a unit under a key
 *   every read of which has a role is never called by that unit.
 * Both are linear in the files read; every regex is anchored or bounded. Pure.
 */
import type { SourceFile } from '../evidence';
import { addressRole } from './address-roles';
import { stripComments } from './statements';

export type CustomKind = 'container' | 'executable' | 'project';

export interface CustomResource {
  kind: CustomKind;
  /** The container image the method sets (`WithImage("repo", tag: ...)`), when a literal. */
  image: string | null;
  /** Where the method is defined. */
  path: string;
}

/** Aspire's resource base types that run something. */
const BASES: Record<string, CustomKind> = {
  ContainerResource: 'container',
  ExecutableResource: 'executable',
  ProjectResource: 'project',
};

/**
 * For each `(` and `{` of `text`, the index just past its matching bracket (0: unmatched), in
 * one pass (string literals skipped, `\"` escapes honoured).
 */
function bracketMatches(text: string): Int32Array {
  const close = new Int32Array(text.length);
  const parens: number[] = [];
  const braces: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"' || c === '\n') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '(') parens.push(i);
    else if (c === '{') braces.push(i);
    else if (c === ')' || c === '}') {
      const open = (c === ')' ? parens : braces).pop();
      if (open !== undefined) close[open] = i + 1;
    }
  }
  return close;
}

/** The longest method body read for its image. */
const MAX_BODY = 20_000;

const lastSegment = (type: string) =>
  (
    type
      .replace(/<[^<>]*>/g, '')
      .split('.')
      .pop() ?? ''
  ).trim();

/**
 * The `Add*` extension methods of IDistributedApplicationBuilder that `files` (one AppHost's C#
 * files) define, by method name, when they add a container, executable or project resource.
 */
export function customResources(files: SourceFile[]): Map<string, CustomResource> {
  const bases = new Map<string, string>();
  const methods: Array<{ name: string; type: string; body: string; path: string }> = [];
  for (const file of files) {
    const text = stripComments(file.text);
    const close = bracketMatches(text);
    // Classes and records with their base type: `class ModelResource(string name) : ContainerResource(name)`.
    for (const m of text.matchAll(/\b(?:class|record)\s+([A-Za-z_]\w*)\s*(<[^<>(){};]*>)?\s*/g)) {
      let i = (m.index ?? 0) + m[0].length;
      if (text[i] === '(') {
        // A primary constructor's parameters.
        if (!close[i]) continue;
        i = close[i]!;
      }
      const base = /^\s*:\s*([A-Za-z_][\w.]*)/.exec(text.slice(i, i + 300));
      if (base) bases.set(m[1] ?? '', lastSegment(base[1] ?? ''));
    }
    for (const m of text.matchAll(
      /\bstatic\s+IResourceBuilder\s*<\s*([A-Za-z_][\w.]*)\s*>\s+(Add[A-Za-z_]\w*)\s*\(\s*this\s+IDistributedApplicationBuilder\s+[A-Za-z_]\w*\s*,\s*string\s+[A-Za-z_]\w*/g,
    )) {
      const paramsOpen = text.indexOf('(', m.index);
      const paramsClose = paramsOpen < 0 ? 0 : (close[paramsOpen] ?? 0);
      if (!paramsClose) continue;
      const rest = text.slice(paramsClose, paramsClose + 400);
      const head = /^\s*(?:where\s[^{=;]*)?(\{|=>)/.exec(rest);
      if (!head) continue;
      let body = '';
      if (head[1] === '{') {
        // The body (its first MAX_BODY characters).
        const open = paramsClose + rest.indexOf('{');
        if (!close[open]) continue;
        body = text.slice(open, Math.min(close[open]!, open + MAX_BODY));
      } else {
        const window = text.slice(paramsClose, paramsClose + MAX_BODY);
        const end = window.indexOf(';');
        body = end < 0 ? window : window.slice(0, end);
      }
      methods.push({ name: m[2] ?? '', type: lastSegment(m[1] ?? ''), body, path: file.path });
    }
  }
  const out = new Map<string, CustomResource>();
  for (const method of methods) {
    // Walk the base types (a bounded chain: classes of the AppHost deriving from one another).
    let type: string | undefined = method.type;
    let kind: CustomKind | null = null;
    for (let n = 0; n < 16 && type && !kind; n++) {
      kind = BASES[type] ?? null;
      type = bases.get(type);
    }
    if (!kind) continue;
    const image =
      /\.\s*WithImage\s*\(\s*"([^"\\\n]+)"(?:\s*,\s*(?:tag\s*:\s*)?"([^"\\\n]+)")?/.exec(
        method.body,
      ) ?? /\bAddContainer\s*\(\s*[^,()]*,\s*"([^"\\\n]+)"/.exec(method.body);
    out.set(method.name, {
      kind,
      image: image ? `${image[1] ?? ''}${image[2] ? `:${image[2]}` : ''}` : null,
      path: method.path,
    });
  }
  return out;
}

/** .NET configuration keys are case-insensitive; an environment variable's `__` is `:`. */
export const configKey = (name: string) => name.replace(/__/g, ':').toLowerCase();

/**
 * The member the value read at `at` is assigned to, from the text before it on its line:
 * `RedirectUris = { $"{configuration` -> `RedirectUris`, `options.Authority = builder.Configuration`
 * -> `Authority`. Null when the value goes anywhere else (an argument, a local variable's use).
 */
export function assignedMember(text: string, at: number): string | null {
  // At most 240 characters back, on the read's line (a bounded window: no scan of a long line).
  const window = text.slice(Math.max(0, at - 240), at);
  const b = window.slice(window.lastIndexOf('\n') + 1);
  // Scanned backwards by hand: no regex backtracking over the look-back.
  let end = b.length;
  const back = (re: RegExp) => {
    while (end > 0 && re.test(b[end - 1]!)) end--;
  };
  // The receiver of the read: `builder.Configuration`, `configuration`, `Environment.`.
  back(/[\w.]/);
  for (let n = 0; n < 40; n++) {
    const start = end;
    back(/\s/);
    // An interpolation hole of a string: `$"{`, `$@"https://{`.
    if (b[end - 1] === '{') {
      const quote = b.lastIndexOf('"', end - 1);
      if (quote > 0 && !/["\n{}]/.test(b.slice(quote + 1, end - 1))) {
        const prefix = b.slice(Math.max(0, quote - 2), quote);
        if (prefix.endsWith('$')) end = prefix.endsWith('@$') ? quote - 2 : quote - 1;
        else if (prefix === '$@') end = quote - 2;
      }
    }
    // Initializer and call openers: `{`, `(`, `[`.
    back(/[\s{([]/);
    // `new T[]`, `new List<T>`, `new Uri`, `new`: the type, then the keyword.
    if (b[end - 1] === ']') {
      const open = b.lastIndexOf('[', end - 1);
      if (open >= 0 && /^\s*$/.test(b.slice(open + 1, end - 1))) end = open;
      back(/\s/);
    }
    if (b[end - 1] === '>') {
      const open = b.lastIndexOf('<', end - 1);
      if (open >= 0 && /^[\w\s.,]*$/.test(b.slice(open + 1, end - 1))) end = open;
    }
    const typeEnd = end;
    back(/[\w.]/);
    if (b.slice(end, typeEnd) !== 'new') {
      const typeStart = end;
      back(/\s/);
      const keyword = b.slice(Math.max(0, end - 3), end) === 'new' && !/\w/.test(b[end - 4] ?? '');
      end = keyword && typeStart < typeEnd ? end - 3 : typeEnd;
    }
    if (end === start) break;
  }
  back(/\s/);
  if (b[end - 1] !== '=' || /[=!<>+\-*/%&|^?]/.test(b[end - 2] ?? '')) return null;
  end--;
  back(/\s/);
  const nameEnd = end;
  back(/\w/);
  const owner = b.slice(end, nameEnd);
  return /^[A-Za-z_]\w*$/.test(owner) ? owner : null;
}

const READS =
  /\[\s*"([A-Za-z_][\w:.-]{0,200})"\s*\]|\b(GetValue\s*<[^<>()]{0,100}>|GetSection|GetRequiredSection|GetConnectionString|GetEnvironmentVariable)\s*\(\s*"([A-Za-z_][\w:.-]{0,200})"/g;

/**
 * Per configuration key (configKey), the roles of its reads in `files` (one unit's C# code):
 * the address role of the member each read's value is assigned to, or null.
 */
export function configReadRoles(
  files: SourceFile[],
  identityProvider: boolean,
): Map<string, Array<string | null>> {
  const out = new Map<string, Array<string | null>>();
  for (const file of files) {
    const text = stripComments(file.text);
    for (const m of text.matchAll(READS)) {
      const raw = m[1] ?? m[3] ?? '';
      const key = configKey(
        m[2]?.startsWith('GetConnectionString') ? `ConnectionStrings:${raw}` : raw,
      );
      const member = assignedMember(text, m.index ?? 0);
      const role = member ? addressRole(member, identityProvider) : null;
      const list = out.get(key);
      if (list) list.push(role);
      else out.set(key, [role]);
    }
  }
  return out;
}
