/**
 * Dapr service invocation over HTTP with the target app id in the `dapr-app-id` header, the id
 * held by a variable the file reads from the environment with a literal default
 * (docs/decisions.md, "Dapr app ids read from the environment"):
 *
 *   const orderService = process.env.ORDER_SERVICE_NAME || 'python-app';
 *   axios.get(`${sidecar}/order`, { headers: { 'dapr-app-id': `${orderService}` } });
 *
 *   ORDERS = os.getenv("ORDERS_APP_ID", "orders")
 *   requests.get(url, headers={"dapr-app-id": ORDERS})
 *
 * Dapr's semantics: a request to the sidecar carrying `dapr-app-id: X` invokes app X. The id is
 * the variable's value, which is the default when the environment does not set it. The default
 * is read (the deployment's value for the variable is not), and the record keeps the variable's
 * name (`env`) so a reader sees where the id may be overridden. A variable assigned anything
 * else (no default, a computed value, assigned twice) names nothing.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import type { LineIndex } from '../shared/text';
import { isTestPath } from './common';
import type { Unit } from './model';

const ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** `const x = process.env.NAME || 'id'` (also `??`, `process.env['NAME']`, `let`, `var`). */
const JS_ENV_DEFAULT =
  /(?:^|[;\s])(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*process\.env(?:\.([A-Za-z_]\w*)|\[\s*(["'])([A-Za-z_]\w*)\3\s*\])\s*(?:\|\||\?\?)\s*(["'`])([^"'`$\\\n]*)\5\s*[;\n]/g;
/** `X = os.getenv("NAME", "id")` / `os.environ.get("NAME", "id")` at the start of a line. */
const PY_ENV_DEFAULT =
  /^[ \t]*([A-Za-z_]\w*)\s*=\s*os\.(?:getenv|environ\.get)\(\s*(["'])([A-Za-z_]\w*)\2\s*,\s*(["'])([^"'\\\n]*)\4\s*\)\s*$/gm;

interface EnvId {
  env: string;
  id: string;
}

/** The file's variables assigned once, from an env variable with a literal app-id default. */
export function envDefaultIds(code: string): Map<string, EnvId> {
  const found = new Map<string, EnvId | null>();
  const add = (name: string, env: string, id: string) => {
    const value = ID.test(id) ? { env, id } : null;
    found.set(name, found.has(name) ? null : value);
  };
  for (const m of code.matchAll(JS_ENV_DEFAULT)) add(m[1]!, m[2] ?? m[4]!, m[6]!);
  for (const m of code.matchAll(PY_ENV_DEFAULT)) add(m[1]!, m[3]!, m[5]!);
  // A name assigned again elsewhere (`x = ...`) is no longer known.
  for (const name of [...found.keys()]) {
    const escaped = name.replace(/\$/g, '\\$');
    const assigned = code.match(new RegExp(String.raw`(?<![\w$.])${escaped}\s*=(?!=)`, 'g'));
    if ((assigned?.length ?? 0) > 1) found.set(name, null);
  }
  return new Map([...found].filter((e): e is [string, EnvId] => e[1] !== null));
}

/** `'dapr-app-id': name`, `'dapr-app-id': \`${name}\``, `headers.set('dapr-app-id', name)`. */
const HEADER =
  /["'`]dapr-app-id["'`]\s*[:,=]\s*(?:`\$\{\s*([A-Za-z_$][\w$]*)\s*\}`|([A-Za-z_$][\w$]*)(?![\w$.(]))/gi;

/** The `dapr-app-id` headers of a file whose value is an env-read variable with a default. */
export function daprHeaderEnvReferences(
  unit: Unit,
  file: SourceFile,
  lang: string,
  code: string,
  idx: LineIndex,
): Evidence[] {
  if (!/dapr-app-id/i.test(code)) return [];
  const vars = envDefaultIds(code);
  if (vars.size === 0) return [];
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const m of code.matchAll(HEADER)) {
    const name = m[1] ?? m[2]!;
    const v = vars.get(name);
    if (!v) continue;
    const object = entityKey('service', v.id);
    if (object === unit.key) continue;
    const line = idx.lineAt(m.index);
    const k = `${line}\u0000${object}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(
      idReferenceEvidence(
        unit,
        file,
        lang,
        line,
        object,
        `${unit.name} reaches service ${v.id} by name (dapr-invoke, header dapr-app-id from ${v.env}, default ${v.id})`,
        {
          id: v.id,
          via: 'dapr-invoke',
          in_test: isTestPath(file.path),
          env: v.env,
          env_default: v.id,
          variable: name,
        },
      ),
    );
  }
  return out;
}

/** A `service-id-reference` record: `unit` reaches `object` by name, at `line` of `file`. */
export function idReferenceEvidence(
  unit: Unit,
  file: SourceFile,
  lang: string,
  line: number,
  object: string,
  summary: string,
  attributes: Record<string, unknown>,
): Evidence {
  return evidence(
    file,
    { start: line, end: line },
    {
      source: 'code',
      provider: `${lang}-source`,
      kind: 'service-id-reference',
      subject: unit.key,
      relationship: 'connects_to',
      object,
      summary,
      attributes,
    },
  );
}
