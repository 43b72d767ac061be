/**
 * Code records whose subject is the program or script folder that holds them, not a unit
 * (`program:<name>`, no entity), given to the deployments that run that code:
 *
 * - `setting-entry-read` (analysis/code/entry-settings.ts), subject `program:<binary>`: the
 *   compose services whose `entrypoint` (else `command`) starts that binary
 *   (`entrypoint: ComposePostService`);
 * - `script-client-call` (analysis/code/lua-clients.ts), attribute `path`: the compose services
 *   that bind-mount a folder (or the file) holding the script (`./lua-scripts:/usr/local/...`).
 *
 * A record no deployment runs keeps no relationship (a program or script nothing starts); one
 * run by several deployments is copied to each. Its address must name a host some deployment
 * declares: an entry's address names no dependency the system runs otherwise.
 */
import { keyKind, keyName } from './evidence';
import { DEPLOYMENT_KINDS, type StoredEvidence } from './reconcile-model';
import { programRun } from './reconcile-programs';
import { isWithin, normalizeDir } from './shared/paths';

const KINDS = new Set(['setting-entry-read', 'script-client-call']);

/** The records of programs and scripts re-subjected to the deployments running them. */
export function assignRunCode(evidence: StoredEvidence[]): StoredEvidence[] {
  if (!evidence.some((e) => KINDS.has(e.evidence_kind))) return evidence;
  const runners = new Map<string, Set<string>>();
  const mounts: Array<{ key: string; path: string }> = [];
  const declared = new Set<string>();
  for (const e of evidence) {
    if (DEPLOYMENT_KINDS.has(e.evidence_kind)) declared.add(keyName(e.subject_key));
    if (keyKind(e.subject_key) !== 'service') continue;
    if (e.evidence_kind === 'service-declared') {
      const program = programRun(e);
      if (program) runners.set(program, (runners.get(program) ?? new Set()).add(e.subject_key));
    }
    if (e.evidence_kind === 'volume-mount' && e.attributes.type === 'bind') {
      const host = typeof e.attributes.host_path === 'string' ? e.attributes.host_path : null;
      const path = host === null ? null : normalizeDir(host);
      if (path !== null) mounts.push({ key: e.subject_key, path });
    }
  }
  const out: StoredEvidence[] = [];
  for (const e of evidence) {
    if (!KINDS.has(e.evidence_kind)) {
      out.push(e);
      continue;
    }
    const keys = new Set<string>();
    if (e.evidence_kind === 'setting-entry-read')
      for (const k of runners.get(keyName(e.subject_key)) ?? []) keys.add(k);
    else
      for (const m of mounts)
        if (m.path !== '' && isWithin(e.location.path, m.path)) keys.add(m.key);
    const reached = e.object_key !== null && declared.has(keyName(e.object_key));
    if (keys.size === 0 || !reached) {
      out.push({ ...e, relationship_kind: null, object_key: null });
      continue;
    }
    // Its own entry (the port it listens on) is no call.
    keys.delete(`service:${keyName(e.object_key as string)}`);
    if (keys.size === 0) {
      out.push({ ...e, relationship_kind: null, object_key: null });
      continue;
    }
    [...keys].sort().forEach((key, i) =>
      out.push({
        ...e,
        id: i === 0 ? e.id : `${e.id}:${i}`,
        subject_key: key,
        attributes: { ...e.attributes, run_by: key },
      }),
    );
  }
  return out;
}
