/**
 * Secrets written into settings files an application or Compose reads as they stand: the project
 * `.env` file (`POSTGRES_PASSWORD=...`) and .NET `appsettings*.json` (a password inside a
 * connection string, an `ApiKey`). Each variable goes through the same rule as a container's
 * environment (env.ts envReferences: secret names, literal values, placeholders, passwords
 * embedded in connection strings); only the literal-secret facts are kept here (the addresses a
 * value points at are read by the compose and connection analyzers). Values never leave.
 */
import type { AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { isRecord } from '../shared/values';
import { envReferences } from './env';

/** .NET settings files (`appsettings.json`, `appsettings.Development.json`). */
export const isAppSettings = (path: string): boolean =>
  /^appsettings([-.][\w.-]+)?\.json$/i.test(basename(path));

function secretEvidence(
  file: SourceFile,
  line: number,
  provider: string,
  name: string,
  value: unknown,
  source: string,
): Evidence[] {
  return envReferences(name, value, () => null, source)
    .filter((r) => r.kind === 'literal-secret')
    .map((r) =>
      evidence(
        file,
        { start: line, end: line },
        {
          source: 'cloud',
          provider,
          kind: 'literal-secret',
          subject: entityKey('secret', name),
          summary: `${file.path} ${r.summary}`,
          attributes: r.attributes,
        },
      ),
    );
}

/** `KEY=value` lines of a `.env` file, values as written (quotes and inline comments removed). */
export function dotenvSecrets(file: SourceFile): AnalyzerOutput {
  const out: Evidence[] = [];
  file.text.split(/\r?\n/).forEach((line, i) => {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) return;
    let value = m[2] ?? '';
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.indexOf(quote, 1) > 0)
      value = value.slice(1, value.indexOf(quote, 1));
    else value = value.replace(/\s+#.*$/, '').trim();
    out.push(...secretEvidence(file, i + 1, 'dotenv', m[1]!, value, 'dotenv'));
  });
  return { evidence: out, gaps: [] };
}

/** Every string leaf of an `appsettings*.json` file, named by its own key. */
export function appSettingsSecrets(file: SourceFile): Evidence[] {
  let root: unknown;
  try {
    // appsettings files allow `//` comments on their own lines.
    root = JSON.parse(file.text.replace(/^\s*\/\/.*$/gm, ''));
  } catch {
    return [];
  }
  const idx = new LineIndex(file.text);
  const out: Evidence[] = [];
  let from = 0;
  const walk = (node: unknown): void => {
    if (!isRecord(node)) return;
    for (const [key, value] of Object.entries(node)) {
      // The key's line: the next occurrence of `"key"` after the previous leaf (document order).
      const at = file.text.indexOf(JSON.stringify(key), from);
      if (at >= 0) from = at;
      if (isRecord(value)) walk(value);
      else if (typeof value === 'string')
        out.push(
          ...secretEvidence(
            file,
            idx.lineAt(Math.max(at, 0)),
            'appsettings',
            key,
            value,
            'appsettings',
          ),
        );
    }
  };
  walk(root);
  return out;
}
