/**
 * Committed templates of an environment file (`.env.sample`, `.env.example`, `env.example`...):
 * the addresses they document, one record per variable whose value holds a host. Which unit the
 * template configures, and whether a deployment gives that unit its environment instead, is
 * decided in reconcile (analysis/reconcile-env-templates.ts); here the file is only read.
 */
import type { AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename } from '../shared/paths';
import { parseHostPort, parseUrlValue } from '../shared/urls';
import { parseDotenv } from './compose-values';
import { redact } from './common';

const TEMPLATE_WORD = '(example|sample|template|tmpl|dist)';
/** `.env.sample`, `app.env.example`, `env.example`, `example.env`. */
const TEMPLATE_NAME = new RegExp(
  `^(([\\w-][\\w.-]*)?\\.env\\.${TEMPLATE_WORD}|env\\.${TEMPLATE_WORD}|${TEMPLATE_WORD}\\.env)$`,
  'i',
);
/** A variable whose bare value (no `scheme://`) is a host: `DB_HOST=localhost`. */
const HOST_NAME = /(^|_)(HOST|HOSTNAME|ADDR|ADDRESS|SERVER)$/i;

export function isEnvTemplate(path: string): boolean {
  return TEMPLATE_NAME.test(basename(path));
}

/** One `env-template-value` record per variable of the template whose value names a host. */
export function analyzeEnvTemplate(file: SourceFile): AnalyzerOutput {
  const out: Evidence[] = [];
  const vars = parseDotenv(file.text);
  const lines = file.text.split(/\r?\n/);
  for (const [variable, raw] of vars) {
    const value = raw.trim();
    if (value === '' || value.includes('${')) continue;
    const url = parseUrlValue(value);
    const hosts = url
      ? url.hosts
      : HOST_NAME.test(variable)
        ? [parseHostPort(value)].filter((h) => h !== null)
        : [];
    const line = lines.findIndex((l) =>
      new RegExp(`^\\s*(export\\s+)?${variable.replace(/[.-]/g, '\\$&')}\\s*=`).test(l),
    );
    if (line < 0) continue;
    for (const h of hosts) {
      if (!h.host) continue;
      out.push(
        evidence(
          file,
          { start: line + 1, end: line + 1 },
          {
            source: 'cloud',
            provider: 'env-template',
            kind: 'env-template-value',
            subject: `file:${file.path}`,
            summary: `${file.path} documents ${variable}=${redact(value)}`,
            attributes: {
              variable,
              value: redact(value),
              host: h.host.toLowerCase(),
              port: h.port ?? null,
              scheme: url?.scheme ?? null,
              documented_by: file.path,
            },
          },
        ),
      );
    }
  }
  return { evidence: out, gaps: [] };
}
