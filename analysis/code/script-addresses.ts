/**
 * Addresses of JavaScript/TypeScript scripts that belong to no code unit (no manifest around
 * them): a load-test script (`k6 run /scripts/load.js`), a seed script a container runs. Such a
 * script is no deployable; the container whose command runs it is (docs/decisions.md, "A script
 * a container's command runs from a mounted folder is that container's code").
 *
 * Evidence `script-address`, subject `program:<script file>` (no entity), object
 * `service:<host>` for each literal http(s) URL whose host is an internal name (a single label
 * or a cluster-local name), at the URL's line; reconcile (analysis/reconcile-run-code.ts) gives
 * it to the compose services whose command or entrypoint runs the file through a bind mount.
 * Comments are blanked first; localhost and IP addresses name no service.
 */
import type { Evidence } from '../evidence';
import { entityKey, normalizeName } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { internalName, isLocalHost } from '../shared/urls';
import { isTestPath, languageOf, lex, lexStyleOf, STRING } from './common';
import type { CodeModel } from './model';

const MAX_FILE_CHARS = 1_000_000;
/** A literal http(s) URL's host and port. */
const URL = /\bhttps?:\/\/([A-Za-z0-9][A-Za-z0-9.-]{0,252})(?::(\d{1,5}))?(?![\w.-])/g;

/** script-address evidence of every JavaScript/TypeScript file no unit holds, outside tests. */
export function scriptAddressEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const f of model.files) {
    const lang = languageOf(f.path);
    if (lang !== 'javascript' && lang !== 'typescript') continue;
    if (isTestPath(f.path) || /\.min\.js$|\.d\.[cm]?ts$/.test(f.path)) continue;
    if (f.text.length > MAX_FILE_CHARS || !/https?:\/\//.test(f.text)) continue;
    if (model.ownerOf(dirname(f.path)) !== null) continue;
    const { code, mask } = lex(f.text, lexStyleOf(lang));
    const idx = new LineIndex(f.text);
    const seen = new Set<string>();
    for (const m of code.matchAll(URL)) {
      const at = m.index ?? 0;
      if (mask[at] !== STRING) continue;
      const host = (m[1] ?? '').toLowerCase();
      const name = isLocalHost(host) ? null : internalName(host);
      if (!name) continue;
      const line = idx.lineAt(at);
      if (seen.has(`${line}\u0000${name}`)) continue;
      seen.add(`${line}\u0000${name}`);
      const port = m[2] ? Number(m[2]) : null;
      out.push(
        evidence(
          f,
          { start: line, end: line },
          {
            source: 'code',
            provider: `${lang}-source`,
            kind: 'script-address',
            subject: `program:${normalizeName(basename(f.path))}`,
            relationship: 'connects_to',
            object: entityKey('service', name),
            summary: `${f.path} connects to ${name}${port !== null ? `:${port}` : ''}`,
            attributes: { host: name, port, scheme: m[0].split(':')[0], in_test: false },
          },
        ),
      );
    }
  }
  return out;
}
