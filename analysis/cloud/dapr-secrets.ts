/**
 * The server addresses a Dapr local-file secret store holds (`secretstores.local.file`): the
 * JSON file its `secretsFile` names, flattened the way the store serves it (nested keys joined
 * with `nestedSeparator`, `:` by default, `ConnectionStrings:CatalogDB`). Each secret whose value
 * is a connection string or URL naming a host is a `dapr-secret-host` record (no edge): the
 * store, the key and the host, cited at the key's line in the secrets file. The secret's value is
 * never kept, only its host, port and engine.
 *
 * Which applications read such a secret is said by their code (analysis/code/dapr-secret-reads.ts);
 * reconcile joins the two (analysis/reconcile-dapr-secrets.ts). The file is found where the
 * sidecar reads it: `secretsFile` relative to the repository root (`./components/secrets.json`,
 * as `dapr run` is started from the root), else, for a path inside a container
 * (`/components/secrets.json`), the file of that name beside the component (the components
 * folder is mounted whole). A file not in the repository names nothing.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { parseUrlValue } from '../shared/urls';
import { basename, dirname, normalizePath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import { parseYamlDocuments } from '../shared/yaml';

const COMPONENT = /^\s*kind\s*:\s*Component\b/m;

interface Store {
  name: string;
  file: SourceFile;
  separator: string;
  component: SourceFile;
}

/** The host, port and engine a secret value names: a URL, an ADO.NET or libpq string. */
export function secretHost(
  value: string,
): { host: string; port: number | null; engine: string | null } | null {
  const url = parseUrlValue(value);
  if (url) {
    const hp = url.unresolved ? undefined : url.hosts[0];
    return hp && hp.host !== '' ? { host: hp.host, port: hp.port, engine: url.scheme } : null;
  }
  if (!value.includes(';') && !/\bhost=/i.test(value)) return null;
  const ado =
    /(?:^|;)\s*(server|data source|address|host)\s*=\s*(?:tcp:)?([A-Za-z0-9][\w.-]*)(?:[,:](\d{1,5}))?\s*(?:;|$)/i.exec(
      value,
    );
  if (
    !ado ||
    !/(?:^|;)\s*(database|initial catalog|user id|uid|username|user|password)\s*=/i.test(value)
  )
    return null;
  const host = (ado[2] ?? '').toLowerCase();
  if (host === '' || host === 'localhost' || host === '.') return null;
  const engine = /^host$/i.test(ado[1] ?? '') ? 'postgres' : 'mssql';
  return { host, port: ado[3] ? Number(ado[3]) : null, engine };
}

function storesOf(files: SourceFile[]): Store[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const out: Store[] = [];
  for (const file of files) {
    if (!/\.ya?ml$/i.test(file.path) || !COMPONENT.test(file.text)) continue;
    if (!file.text.includes('secretstores.local.file')) continue;
    for (const doc of parseYamlDocuments(file).docs) {
      const o = isRecord(doc.value) ? doc.value : null;
      const spec = isRecord(o?.spec) ? o.spec : null;
      if (!o || o.kind !== 'Component' || asString(spec?.type) !== 'secretstores.local.file')
        continue;
      if (!/^dapr\.io\//.test(asString(o.apiVersion) ?? '')) continue;
      const name = isRecord(o.metadata) ? asString(o.metadata.name) : null;
      const meta = new Map<string, string>();
      for (const m of asArray(spec?.metadata))
        if (isRecord(m) && asString(m.name)) meta.set(String(m.name), String(m.value ?? ''));
      const written = meta.get('secretsFile')?.trim() ?? '';
      if (!name || written === '') continue;
      const rooted = normalizePath(written.replace(/^\.\//, '').replace(/^\/+/, ''));
      const beside = normalizePath(`${dirname(file.path)}/${basename(written)}`);
      const target =
        (!written.startsWith('/') && rooted !== null ? byPath.get(rooted) : undefined) ??
        (beside !== null ? byPath.get(beside) : undefined);
      if (!target) continue;
      out.push({
        name,
        file: target,
        separator: meta.get('nestedSeparator') || ':',
        component: file,
      });
    }
  }
  return out;
}

/** Leaves of a JSON object: the flattened key, its path, and the string value. */
function leaves(value: unknown, path: string[] = []): Array<{ path: string[]; value: string }> {
  if (typeof value === 'string') return [{ path, value }];
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
}

/** The line of a nested key: each key found after its parent's. */
function lineOf(text: string, path: string[]): number {
  let at = 0;
  for (const key of path) {
    const quoted = JSON.stringify(key);
    const next = text.indexOf(`${quoted}`, at);
    if (next < 0) break;
    at = next + quoted.length;
  }
  return text.slice(0, at).split('\n').length;
}

/** `dapr-secret-host` records of every local-file secret store in the repository. */
export function daprSecretHostEvidence(files: SourceFile[]): Evidence[] {
  const out: Evidence[] = [];
  for (const store of storesOf(files)) {
    let json: unknown;
    try {
      json = JSON.parse(store.file.text);
    } catch {
      continue;
    }
    for (const leaf of leaves(json)) {
      const found = secretHost(leaf.value);
      if (!found) continue;
      const key = leaf.path.join(store.separator);
      const line = lineOf(store.file.text, leaf.path);
      out.push(
        evidence(
          store.file,
          { start: line, end: line },
          {
            source: 'cloud',
            provider: 'dapr',
            kind: 'dapr-secret-host',
            subject: entityKey('secretstore', store.name),
            summary: `Dapr secret store ${store.name} (${store.component.path}) holds secret ${key}, an address of ${found.host}`,
            attributes: {
              store: store.name,
              key,
              separator: store.separator,
              host: found.host,
              port: found.port,
              engine: found.engine,
              component_path: store.component.path,
            },
          },
        ),
      );
    }
  }
  return out;
}
