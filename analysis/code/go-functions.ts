/**
 * Go functions as the reconciler credits a shared package's reads (analysis/reconcile-addresses.ts):
 * the exported top-level function an environment read sits in, and the exported names a file
 * selects through an import's alias (`client.NewUsersClient`). gofmt'd text: a top-level `func`
 * starts a line, its closing brace is the next `}` at the start of a line.
 */

/**
 * The exported function (not a method) whose body holds `index`, when nothing else in the file
 * names it (a caller in the same file would run the read for other callers too); else null.
 */
export function goReadFunction(code: string, index: number): string | null {
  const before = code.slice(0, index);
  const start = before.lastIndexOf('\nfunc ');
  if (start < 0) return null;
  // A line closing a top-level block between the declaration and the read: package level.
  if (/\n\}/.test(before.slice(start + 1))) return null;
  const m = /^func[ \t]+([A-Z]\w*)[ \t]*[([]/.exec(before.slice(start + 1));
  if (!m) return null;
  const name = m[1] ?? '';
  const named = code.match(new RegExp(`(?<![\\w.])${name}\\b`, 'g'))?.length ?? 0;
  return named === 1 ? name : null;
}

/** Exported names selected through `alias.` in unmasked code (`client.NewUsersClient` -> NewUsersClient). */
export function goSelected(
  code: string,
  mask: Uint8Array,
  alias: string,
  inCode: number,
): string[] {
  if (!/^[A-Za-z_]\w*$/.test(alias)) return [];
  const re = new RegExp(`(?<![\\w.])${alias}\\.([A-Z]\\w*)`, 'g');
  const out = new Set<string>();
  let m: RegExpExecArray | null;
  while ((m = re.exec(code)) !== null) if (mask[m.index] === inCode) out.add(m[1] ?? '');
  return [...out].sort();
}
