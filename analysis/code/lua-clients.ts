/**
 * Client connections opened by Lua scripts (OpenResty/nginx): a connect call given a literal
 * host and a port (`GenericObjectPool:connection(UserServiceClient, "user-service" .. k8s_suffix,
 * 9090)`, `conn:connect("media-mongodb", 27017)`). The host, optionally suffixed at run time
 * (`.. k8s_suffix`, a namespace), names the unit the script calls.
 *
 * Scripts are no unit: the server that runs them is the deployment that mounts their folder
 * (`./lua-scripts:/usr/local/openresty/nginx/lua-scripts`). Evidence `script-client-call`,
 * subject `program:<script>` (no entity), object `service:<host>`, at the call; reconcile
 * (analysis/reconcile-run-code.ts) gives it to the compose services mounting the script.
 */
import type { Evidence } from '../evidence';
import { entityKey, normalizeName } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { internalName, isLocalHost } from '../shared/urls';
import { isTestPath } from './common';
import type { CodeModel } from './model';

/** A connect call and its arguments (one level of nested parentheses). */
const CALL = /[:.](connect|connection|new_connection)\s*\(((?:[^()]|\([^()]*\))*)\)/g;
/** A literal host (a run-time suffix allowed) followed by a literal port. */
const HOST_PORT = /(["'])([a-z][a-z0-9.-]*)\1\s*(?:\.\.\s*[\w.]+\s*)?,\s*(\d{2,5})\s*(?:,|$)/i;

/** The text with Lua comments (`--` to the end of the line, `--[[ ]]`) blanked, lines kept. */
function withoutComments(text: string): string {
  return text
    .replace(/--\[(=*)\[[\s\S]*?\]\1\]/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/^((?:[^"'\n-]|"[^"\n]*"|'[^'\n]*'|-(?!-))*)--[^\n]*/gm, '$1');
}

/** script-client-call evidence of every Lua script outside tests. */
export function luaClientEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const f of model.files) {
    if (!f.path.endsWith('.lua') || isTestPath(f.path) || !/connect/.test(f.text)) continue;
    const code = withoutComments(f.text);
    const idx = new LineIndex(f.text);
    for (const m of code.matchAll(CALL)) {
      const hp = HOST_PORT.exec(m[2] ?? '');
      if (!hp) continue;
      const host = hp[2] ?? '';
      const name = isLocalHost(host) ? null : internalName(host);
      if (!name) continue;
      const line = idx.lineAt((m.index ?? 0) + m[0].indexOf(hp[0]));
      out.push(
        evidence(
          f,
          { start: line, end: line },
          {
            source: 'code',
            provider: 'lua-source',
            kind: 'script-client-call',
            subject: `program:${normalizeName(basename(f.path))}`,
            relationship: 'connects_to',
            object: entityKey('service', name),
            summary: `${f.path} connects to ${name}:${hp[3]}`,
            attributes: { host: name, port: Number(hp[3]), call: m[1], in_test: false },
          },
        ),
      );
    }
  }
  return out;
}
