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
 * - `script-address` (analysis/code/script-addresses.ts), a script no unit holds: the compose
 *   services whose command or entrypoint names the file through a bind mount of a folder holding
 *   it (`./k6:/scripts`, `command: ["run", "/scripts/load.js"]`), or names it relative to a
 *   `working_dir` that is such a mount's target. Mounting the folder alone is not running the
 *   script (a web server serves its files to browsers).
 *
 * A record no deployment runs keeps no relationship (a program or script nothing starts); one
 * run by several deployments is copied to each. Its address must name a host some deployment
 * declares: an entry's address names no dependency the system runs otherwise.
 */
import { keyKind, keyName } from './evidence';
import { DEPLOYMENT_KINDS, type StoredEvidence } from './reconcile-model';
import { programRun } from './reconcile-programs';
import { isWithin, joinPath, normalizeDir } from './shared/paths';

const KINDS = new Set(['setting-entry-read', 'script-client-call', 'script-address']);
/** Command words considered per service (a command is a few words; a hostile one is cut). */
const MAX_WORDS = 256;

function words(v: unknown): string[] {
  if (typeof v === 'string') return v.split(/\s+/).filter((w) => w !== '');
  return Array.isArray(v) ? v.filter((w): w is string => typeof w === 'string') : [];
}

/**
 * Repository file -> the compose services whose command or entrypoint runs it through a bind
 * mount (a word naming the file inside the container, absolute or under the `working_dir`).
 */
function runFiles(evidence: StoredEvidence[]): Map<string, Set<string>> {
  const said = new Map<string, { words: string[]; dir: string | null }>();
  const mounts = new Map<string, Map<string, string>>();
  for (const e of evidence) {
    if (e.provider !== 'docker-compose' || keyKind(e.subject_key) !== 'service') continue;
    if (e.evidence_kind === 'service-declared') {
      const w = [...words(e.attributes.entrypoint), ...words(e.attributes.command)];
      const dir = typeof e.attributes.working_dir === 'string' ? e.attributes.working_dir : null;
      said.set(e.subject_key, { words: w.slice(0, MAX_WORDS), dir });
    }
    if (e.evidence_kind === 'volume-mount' && e.attributes.type === 'bind') {
      const { host_path: host, target } = e.attributes;
      if (typeof host !== 'string' || typeof target !== 'string') continue;
      const from = normalizeDir(host);
      const to = normalizeDir(target);
      if (from === null || from === '' || to === null) continue;
      const byTarget = mounts.get(e.subject_key) ?? new Map<string, string>();
      if (!byTarget.has(to)) byTarget.set(to, from);
      mounts.set(e.subject_key, byTarget);
    }
  }
  const out = new Map<string, Set<string>>();
  for (const [key, { words: ws, dir }] of said) {
    const byTarget = mounts.get(key);
    if (!byTarget) continue;
    for (const w of ws) {
      const inside = normalizeDir(w.startsWith('/') || dir === null ? w : `${dir}/${w}`);
      if (inside === null || inside === '') continue;
      // The mount whose target holds the word's path, from the deepest folder up.
      const segs = inside.split('/');
      for (let i = segs.length - 1; i >= 0; i--) {
        const from = byTarget.get(segs.slice(0, i).join('/'));
        if (from === undefined) continue;
        const file = joinPath(from, segs.slice(i).join('/'));
        if (file !== null) out.set(file, (out.get(file) ?? new Set()).add(key));
        break;
      }
    }
  }
  return out;
}

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
  let files: Map<string, Set<string>> | null = null;
  const out: StoredEvidence[] = [];
  for (const e of evidence) {
    if (!KINDS.has(e.evidence_kind)) {
      out.push(e);
      continue;
    }
    const keys = new Set<string>();
    if (e.evidence_kind === 'setting-entry-read')
      for (const k of runners.get(keyName(e.subject_key)) ?? []) keys.add(k);
    else if (e.evidence_kind === 'script-address')
      for (const k of (files ??= runFiles(evidence)).get(e.location.path) ?? []) keys.add(k);
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
