/**
 * Settings a container is given (docs/decisions.md, "Mounted settings"): a repository file or
 * folder a compose service mounts (`./sentry:/etc/sentry`) or is given as a `configs:` /
 * `secrets:` file is that container's configuration. The addresses the code analyzer read from
 * such a file (a Python settings module's `DATABASES`, a YAML config's URLs) are connections of
 * EVERY container that reads it, cited at the settings line and at the mount; they are not the
 * connections of the code unit whose folder happens to hold the file.
 *
 * Which containers read a mounted file (so that a file another program reads does not spread):
 * - the file itself is mounted (or, when the repository holds only its template, the
 *   `config.example.yml` the installer copies to the mounted `config.yml`);
 * - its folder is mounted and the container's command, entrypoint or environment names the
 *   mount's target (`SENTRY_CONF: /etc/sentry`, `-c /etc/app/config.yml`);
 * - its folder is mounted only into containers running one program (one image or build).
 * An address naming one of the containers that read the file is the program's own address (how
 * its processes name each other or themselves), not an edge.
 *
 * The unit whose folder holds the file keeps the records when a deployment builds or runs it; a
 * unit nothing deploys whose every finding was such settings (its declaration and dependencies
 * aside) is no entity of its own: it is the repository holding the containers' configuration.
 */
import { keyKind, keyName } from './evidence';
import { GRAPH, type StoredEvidence } from './reconcile-model';
import { basename, dirname, isWithin } from './shared/paths';

/** Records of a file's content that belong to whoever reads the file. */
const MOVABLE = new Set(['connection-string', 'env-read', 'external-api-call', 'address-handed']);
/** A unit's records that say nothing about what it does at run time. */
const DECLARATION_ONLY = new Set(['unit-declared', 'dependency-declared']);

interface Mount {
  record: StoredEvidence;
  container: string;
  hostPath: string;
  named: boolean;
  program: string | null;
}

export interface MountedSettings {
  /** The evidence with mounted settings records given to the containers that read them. */
  evidence: StoredEvidence[];
  /** Per record given to a container, the mount that gives it (cited on the edge too). */
  mountOf: Map<StoredEvidence, StoredEvidence>;
  /** Subjects that are no entity: undeployed units whose findings were all mounted settings. */
  settingsOnly: Set<string>;
}

/** The words of a name or key: `GeoMongoAddress`, `mongodb-geo`, `events_consumer`. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3);
}

/** Two words for one thing: equal, or sharing a prefix of 5+ letters over most of the shorter. */
function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const n = Math.min(a.length, b.length);
  let p = 0;
  while (p < n && a[p] === b[p]) p++;
  return p >= 5 && p >= 0.75 * n;
}

/**
 * The readers a record is for. A file shared by several containers may hold each one's own
 * settings (`"GeoMongoAddress": "mongodb-geo:27017"` beside `"ProfileMongoAddress"`): a setting
 * whose key or address names some of the readers (`geo`) is theirs only; one naming none of
 * them (`DATABASES`, `kafka`) is every reader's.
 */
function confined(
  e: StoredEvidence,
  readers: Mount[],
  declared: string[],
  find: (key: string) => string,
): Mount[] {
  if (readers.length < 2) return readers;
  const said = [
    ...(typeof e.attributes.setting === 'string' ? words(e.attributes.setting) : []),
    ...(e.object_key ? words(keyName(e.object_key)) : []),
  ];
  if (said.length === 0) return readers;
  const target = e.object_key === null ? null : find(e.object_key);
  const names = (key: string) => {
    const own = words(keyName(key));
    return own.length > 0 && own.every((w) => said.some((s) => sameWord(w, s)));
  };
  const named = readers.filter((m) => names(m.container));
  if (named.length > 0) return named;
  // A setting naming another deployable (not the address itself), one that reads no copy of
  // the file, is that deployable's: none of these readers'.
  const other = declared.some((k) => find(k) !== target && names(k));
  return other ? [] : readers;
}

/** `config.example.yml` / `config.yml.example` -> `config.yml`; null for no template name. */
function templateOf(path: string): string | null {
  const base = basename(path);
  const plain = base.replace(/\.(example|sample|dist|template|tmpl)(?=\.|$)/i, '');
  if (plain === base) return null;
  const dir = dirname(path);
  return dir === '' ? plain : `${dir}/${plain}`;
}

/**
 * Gives mounted settings to the containers reading them. `find` is reconcile's identity
 * (union-find representative); `deployed` holds the representatives a deployment declares.
 */
export function mountedSettings(
  evidence: StoredEvidence[],
  find: (key: string) => string,
  declared: string[],
): MountedSettings {
  const deployed = new Set(declared.map(find));
  const mounts: Mount[] = [];
  for (const e of evidence) {
    if (e.evidence_kind !== 'volume-mount' || typeof e.attributes.host_path !== 'string') continue;
    if (!GRAPH.has(keyKind(e.subject_key))) continue;
    mounts.push({
      record: e,
      container: e.subject_key,
      hostPath: e.attributes.host_path,
      named: e.attributes.named_by_container === true,
      program: typeof e.attributes.program === 'string' ? e.attributes.program : null,
    });
  }
  const programs = new Map<string, Set<string | null>>();
  for (const m of mounts)
    programs.set(m.hostPath, (programs.get(m.hostPath) ?? new Set()).add(m.program));
  const oneProgram = (h: string) => {
    const p = programs.get(h);
    return p !== undefined && p.size === 1 && !p.has(null);
  };
  const readersCache = new Map<string, Mount[]>();
  const readersOf = (path: string): Mount[] => {
    let r = readersCache.get(path);
    if (r) return r;
    const template = templateOf(path);
    const byContainer = new Map<string, Mount>();
    for (const m of mounts) {
      const file = m.hostPath === path || m.hostPath === template;
      const folder = !file && m.hostPath !== path && isWithin(path, m.hostPath);
      if (!file && !(folder && (m.named || oneProgram(m.hostPath)))) continue;
      if (!byContainer.has(m.container)) byContainer.set(m.container, m);
    }
    r = [...byContainer.values()].sort((a, b) => a.container.localeCompare(b.container));
    readersCache.set(path, r);
    return r;
  };

  const out: StoredEvidence[] = [];
  const mountOf = new Map<StoredEvidence, StoredEvidence>();
  const movedFrom = new Set<string>();
  for (const e of evidence) {
    if (e.source_type !== 'code' || !MOVABLE.has(e.evidence_kind)) {
      out.push(e);
      continue;
    }
    const readers = mounts.length ? readersOf(e.location.path) : [];
    // A program's settings file given to no container is no claim about the unit around it.
    if (readers.length === 0 && e.attributes.settings_file === true) continue;
    if (readers.length === 0) {
      out.push(e);
      continue;
    }
    // The unit stays a subject when something deploys it and it is none of the readers (its
    // own image holds the file too); a reader it is gets the record like the others.
    const unit = find(e.subject_key);
    const unitReads = readers.some((m) => find(m.container) === unit);
    if (deployed.has(unit) && !unitReads && e.attributes.settings_file !== true) out.push(e);
    else movedFrom.add(e.subject_key);
    // The program's own address: a container that reads this very file.
    const self =
      e.object_key !== null && readers.some((m) => find(m.container) === find(e.object_key!));
    if (self) continue;
    for (const m of confined(e, readers, declared, find)) {
      const copy: StoredEvidence = {
        ...e,
        subject_key: m.container,
        summary: `${e.summary}; read by ${m.container}, which is given ${m.hostPath}`,
        attributes: { ...e.attributes, mounted_settings: m.hostPath, settings_of: e.subject_key },
      };
      out.push(copy);
      mountOf.set(copy, m.record);
    }
  }
  if (movedFrom.size === 0) return { evidence: out, mountOf, settingsOnly: new Set() };
  // Undeployed units left with nothing but their declaration: the settings were all they said.
  const substantive = new Set<string>();
  for (const e of out)
    if (!DECLARATION_ONLY.has(e.evidence_kind)) substantive.add(find(e.subject_key));
  const settingsOnly = new Set(
    [...movedFrom].filter((k) => !deployed.has(find(k)) && !substantive.has(find(k))),
  );
  return { evidence: out, mountOf, settingsOnly };
}
