/**
 * Owner hints from a CODEOWNERS file: for a path, the owners of the last matching line (as
 * GitHub and GitLab read it). Patterns follow .gitignore rules: a leading `/` anchors at the
 * root, a pattern without an inner `/` matches at any depth, a trailing `/` (or a pattern that
 * names a folder) covers everything below. GitLab `[Section]` headers are skipped.
 */
import picomatch from 'picomatch';

interface OwnerLine {
  match: (path: string) => boolean;
  owners: string[];
}

export interface OwnerIndex {
  ownersOf(path: string): string[];
}

function matcher(pattern: string): (path: string) => boolean {
  let p = pattern;
  const anchored = p.startsWith('/');
  if (anchored) p = p.slice(1);
  const folder = p.endsWith('/');
  if (folder) p = p.slice(0, -1);
  const inner = p.includes('/');
  const base = anchored || inner ? p : `**/${p}`;
  const globs = folder ? [`${base}/**`] : [base, `${base}/**`];
  const test = picomatch(globs, { dot: true });
  return (path) => test(path);
}

export function parseCodeowners(text: string): OwnerIndex {
  const lines: OwnerLine[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line || line.startsWith('[') || line.startsWith('^[')) continue;
    const [pattern, ...owners] = line.split(/\s+/);
    if (!pattern) continue;
    lines.push({ match: matcher(pattern.replace(/\\ /g, ' ')), owners });
  }
  return {
    ownersOf(path: string): string[] {
      for (let i = lines.length - 1; i >= 0; i--)
        if (lines[i]!.match(path)) return lines[i]!.owners;
      return [];
    },
  };
}
