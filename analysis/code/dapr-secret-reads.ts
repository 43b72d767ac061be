/**
 * The Dapr secrets an application reads, by store and key (`dapr-secret-read`, no edge):
 *
 * - a secret fetched by name: `GetSecretAsync("store", "key")` (.NET), `GetSecret(ctx, "store",
 *   "key", nil)` (Go), `get_secret("store", "key")` (Python), `getSecret("store", "key")` (Java),
 *   `secret.get("store", "key")` (JavaScript);
 * - a store loaded as .NET configuration (`AddDaprSecretStore("store", ...)`, the
 *   Dapr.Extensions.Configuration provider): each configuration key the application's .NET code
 *   reads (`Configuration["ConnectionStrings:CatalogDB"]`, `GetConnectionString("CatalogDB")`,
 *   `GetValue<T>("Key")`) is a read of that store's secret of the same key. A key the code never
 *   reads is no read: a store holding several applications' secrets gives each only its own.
 *
 * The store and key may be literals or string constants of the file
 * (analysis/code/string-constants.ts). Which address a secret holds is read from the store's
 * file (analysis/cloud/dapr-secrets.ts); reconcile joins the two
 * (analysis/reconcile-dapr-secrets.ts).
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { LineIndex } from '../shared/text';
import { isTestPath, languageOf, lex, lexStyleOf } from './common';
import type { CodeModel } from './model';
import { stringConstants } from './string-constants';

/** A component name or secret key as written in a literal. */
const NAME = String.raw`[A-Za-z0-9_][\w.:-]*`;

interface Read {
  file: SourceFile;
  line: number;
  store: string;
  key: string;
  via: 'get-secret' | 'configuration';
}

/** An argument: a literal (group `l`) or an identifier (group `c`) resolved as a constant. */
const arg = (n: number) =>
  String.raw`(?:(?<q${n}>["'\`])(?<l${n}>${NAME})\k<q${n}>|(?<c${n}>[A-Za-z_]\w*)(?![\w.(]))`;

const GET_SECRET = new RegExp(
  String.raw`\b(?:GetSecret(?:Async)?|get_secret|getSecret|secret\.get)\s*(?:<[^<>()]*>)?\(\s*(?:ctx\s*,\s*|context\.\w+\(\)\s*,\s*)?(?:store_?[Nn]ame\s*[:=]\s*)?${arg(1)}\s*,\s*(?:key\s*[:=]\s*)?${arg(2)}`,
  'g',
);
const CONFIG_STORE = new RegExp(
  String.raw`\bAddDaprSecretStore\s*\(\s*(?:store\s*:\s*)?${arg(1)}`,
  'g',
);
const CONFIG_READS: [RegExp, (k: string) => string][] = [
  [/\b\w*[Cc]onfig(?:uration)?\s*\[\s*"([^"\n]+)"\s*\]/g, (k) => k],
  [/\bGetConnectionString\s*\(\s*"([^"\n]+)"\s*\)/g, (k) => `ConnectionStrings:${k}`],
  [/\bGetValue\s*<[^<>()]*>\s*\(\s*"([^"\n]+)"/g, (k) => k],
];

function value(m: RegExpExecArray, n: number, constants: Map<string, string>): string | null {
  const literal = m.groups?.[`l${n}`];
  if (literal !== undefined) return literal;
  const name = m.groups?.[`c${n}`];
  return name === undefined ? null : (constants.get(name) ?? null);
}

function readsOf(files: SourceFile[]): Read[] {
  const reads: Read[] = [];
  const configStores = new Set<string>();
  const configReads: Array<Omit<Read, 'store'>> = [];
  // Configuration reads count in every C# file of a unit that loads a store as configuration.
  const loadsStore = files.some((f) => f.text.includes('AddDaprSecretStore'));
  for (const file of files) {
    const lang = languageOf(file.path);
    if (!lang) continue;
    const dapr = /dapr/i.test(file.text);
    const csharp =
      loadsStore && lang === 'csharp' && /onfig|GetConnectionString|GetValue/.test(file.text);
    if (!dapr && !csharp) continue;
    const { code } = lex(file.text, lexStyleOf(lang));
    const idx = new LineIndex(file.text);
    const constants = stringConstants(code);
    if (dapr) {
      for (const m of code.matchAll(GET_SECRET)) {
        const store = value(m, 1, constants);
        const key = value(m, 2, constants);
        if (store && key)
          reads.push({ file, line: idx.lineAt(m.index ?? 0), store, key, via: 'get-secret' });
      }
      for (const m of code.matchAll(CONFIG_STORE)) {
        const store = value(m, 1, constants);
        if (store) configStores.add(store);
      }
    }
    if (!csharp) continue;
    for (const [re, keyOf] of CONFIG_READS)
      for (const m of code.matchAll(re))
        configReads.push({
          file,
          line: idx.lineAt(m.index ?? 0),
          key: keyOf(m[1] ?? ''),
          via: 'configuration',
        });
  }
  for (const store of [...configStores].sort())
    for (const r of configReads) reads.push({ ...r, store });
  return reads;
}

/** `dapr-secret-read` records of every unit (module comment). */
export function daprSecretReadEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const unit of model.units) {
    const files = model.filesByUnit.get(unit.key) ?? [];
    const seen = new Set<string>();
    for (const r of readsOf(files)) {
      const id = `${r.file.path}\u0000${r.line}\u0000${r.store}\u0000${r.key}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(
        evidence(
          r.file,
          { start: r.line, end: r.line },
          {
            source: 'code',
            provider: `${languageOf(r.file.path) ?? 'code'}-source`,
            kind: 'dapr-secret-read',
            subject: unit.key,
            summary:
              r.via === 'get-secret'
                ? `${unit.name} reads secret ${r.key} from Dapr secret store ${r.store}`
                : `${unit.name} reads configuration ${r.key}; its configuration includes Dapr secret store ${r.store}`,
            attributes: {
              store: r.store,
              key: r.key,
              via: r.via,
              in_test: isTestPath(r.file.path),
            },
          },
        ),
      );
    }
  }
  return out;
}
