/**
 * Compose's default project and its `-f` files (docs/decisions.md, "A folder's compose project is
 * its default files"): `docker compose up` in a folder reads `compose.yaml` (or
 * `docker-compose.yml`, any spelling) and its `.override` file, nothing else. Another compose
 * file beside them (`docker-compose.prod.yml`, `docker-compose.windows.yml`,
 * `docker-compose.elk.yml`) is read only when a command names it with `-f`: an overlay for
 * another environment or an optional add-on. When no deploy command of the repository (README,
 * Makefile, deploy script, pipeline) names such a file, it is no part of the deployment: like a
 * test stack (compose-test-stacks.ts), it keeps only the declarations of deployables the default
 * project also declares (their identity and image), never its edges, settings nor entities of
 * its own. A folder without a default file keeps all its compose files (each is run with `-f`).
 * Pure and deterministic.
 */
import { keyName, type Evidence } from './evidence';
import { isDefaultComposeFile } from './cloud/compose-store-names';
import { dirname } from './shared/paths';

type Ev = Evidence & { id: string };

const DECLARATIONS = new Set(['service-declared', 'workload-declared']);
const KEPT = new Set(['service-declared', 'image-reference']);
const DEPLOY_KINDS = new Set(['deploys', 'deploy-manifests']);

const isCompose = (e: Ev) => e.source_type === 'cloud' && e.provider === 'docker-compose';

/** Compose files a deploy command names (`docker compose -f a.yml -f b.yml up`). */
function namedComposeFiles(evidence: Ev[]): Set<string> {
  const out = new Set<string>();
  for (const e of evidence) {
    if (!DEPLOY_KINDS.has(e.evidence_kind)) continue;
    const a = e.attributes;
    for (const f of [a.compose_file, ...(Array.isArray(a.compose_files) ? a.compose_files : [])])
      if (typeof f === 'string' && f !== '') out.add(f);
  }
  return out;
}

/**
 * The compose files of the evidence that are `-f` files of a folder holding Compose's default
 * files, and that no deploy command names.
 */
export function unusedComposeOverlays(evidence: Ev[]): Set<string> {
  const byDir = new Map<string, Set<string>>();
  for (const e of evidence) {
    // A compose file declares services; a compose record may sit in another file (an env file).
    if (!isCompose(e) || e.evidence_kind !== 'service-declared') continue;
    const dir = dirname(e.location.path);
    const files = byDir.get(dir) ?? new Set<string>();
    files.add(e.location.path);
    byDir.set(dir, files);
  }
  const candidates = new Set<string>();
  for (const files of byDir.values()) {
    const list = [...files];
    if (!list.some(isDefaultComposeFile)) continue;
    for (const f of list) if (!isDefaultComposeFile(f)) candidates.add(f);
  }
  if (candidates.size === 0) return candidates;
  // Used: a default file, a file a command names, and (transitively) a file a used file
  // `include`s or takes `extends` bases from.
  const used = namedComposeFiles(evidence);
  const links: Array<[from: string, to: string]> = [];
  for (const e of evidence) {
    if (!isCompose(e) || e.evidence_kind !== 'service-declared') continue;
    const a = e.attributes;
    if (typeof a.included_by === 'string') links.push([a.included_by, e.location.path]);
    if (Array.isArray(a.extends_files))
      for (const f of a.extends_files) if (typeof f === 'string') links.push([e.location.path, f]);
  }
  const isUsed = (f: string) => used.has(f) || (isDefaultComposeFile(f) && !candidates.has(f));
  for (let grew = true; grew;) {
    grew = false;
    for (const [from, to] of links)
      if (isUsed(from) && !used.has(to)) {
        used.add(to);
        grew = true;
      }
  }
  return new Set([...candidates].filter((f) => !used.has(f)));
}

/** Evidence without what unused `-f` files beside a default compose project add of their own. */
export function withoutUnusedOverlays<T extends Ev>(evidence: T[]): T[] {
  const overlays = unusedComposeOverlays(evidence);
  if (overlays.size === 0) return evidence;
  const inOverlay = (e: T) => isCompose(e) && overlays.has(e.location.path);
  // Deployables the default projects (and every other deployment) declare.
  const deployed = new Set<string>();
  for (const e of evidence)
    if (e.source_type === 'cloud' && DECLARATIONS.has(e.evidence_kind) && !inOverlay(e))
      deployed.add(keyName(e.subject_key));
  return evidence.filter(
    (e) => !inOverlay(e) || (KEPT.has(e.evidence_kind) && deployed.has(keyName(e.subject_key))),
  );
}
