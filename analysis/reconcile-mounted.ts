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
import { isSettingsFile } from './code/settings-files';

/** Records of a file's content that belong to whoever reads the file. */
const MOVABLE = new Set(['connection-string', 'env-read', 'external-api-call', 'address-handed']);
/**
 * A file a folder mount can make a container's settings: a settings file by name or a file of a
 * configuration format. Program source under a mounted folder (a development override's
 * `./src:/usr/src/code/src`, for hot reload) is its unit's code, not settings: spreading every
 * address of a source tree to each container that mounts it made every process of one image
 * call everything any of them calls. A program file mounted by itself (a health-check script)
 * is still that container's.
 */
const CONFIG_FORMAT = /\.(ya?ml|json|toml|ini|conf|cfg|properties|env|xml)$/i;
const isSettingsPath = (path: string) => isSettingsFile(path) || CONFIG_FORMAT.test(path);

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
  // `fileOnly`: settings known only by content (a `tempo.yaml`, an `endpoints.json`): a
  // container given the file itself reads them, or one given its folder whose command or
  // environment names that folder; a folder given to one program without naming it (Grafana's
  // dashboards) may hold anything.
  const readersOf = (path: string, fileOnly: boolean): Mount[] => {
    const cacheKey = fileOnly ? `file\u0000${path}` : path;
    let r = readersCache.get(cacheKey);
    if (r) return r;
    const template = templateOf(path);
    const settings = fileOnly || isSettingsPath(path);
    const byContainer = new Map<string, Mount>();
    for (const m of mounts) {
      const file = m.hostPath === path || m.hostPath === template;
      const folder = settings && !file && m.hostPath !== path && isWithin(path, m.hostPath);
      if (!file && !(folder && (m.named || (!fileOnly && oneProgram(m.hostPath))))) continue;
      if (!byContainer.has(m.container)) byContainer.set(m.container, m);
    }
    r = [...byContainer.values()].sort((a, b) => a.container.localeCompare(b.container));
    readersCache.set(cacheKey, r);
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
    const readers = mounts.length
      ? readersOf(e.location.path, e.attributes.mounted_file_only === true)
      : [];
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
  for (const [copy, mount] of writtenSettings(evidence, find)) {
    out.push(copy);
    mountOf.set(copy, mount);
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

/** `$VAR`, `$$VAR` or `${VAR}` written in a command. */
function namesVariable(text: string, variable: string): boolean {
  const v = variable.replace(/[^A-Za-z0-9_]/g, '');
  return v.length > 0 && new RegExp(`\\$\\{?${v}(?![A-Za-z0-9_])`).test(text);
}

/**
 * Settings a one-shot container writes into a named volume (docs/decisions.md, "Settings written
 * into a shared volume"): an init service (`configurator`) is given addresses in its environment
 * and its command writes them into a file on a named volume (`bench set-config -g db_host
 * $$DB_HOST`); the long-running containers of the same image that mount that volume and wait for
 * the writer to finish (`depends_on: {configurator: {condition: service_completed_successfully}}`)
 * read them from there. Each such address is a connection of each reader, cited at the writer's
 * environment line and at the reader's mount, weaker than an address the reader is given itself.
 * The writer keeps its own records. Only the variables the writer's command or entrypoint names
 * are carried: an address it is given for another use is not written.
 */
function writtenSettings(
  evidence: StoredEvidence[],
  find: (key: string) => string,
): Array<[StoredEvidence, StoredEvidence]> {
  const waits = evidence.filter(
    (e) =>
      e.evidence_kind === 'depends-on' &&
      e.object_key !== null &&
      e.attributes.condition === 'service_completed_successfully',
  );
  if (waits.length === 0) return [];
  const add = <V>(m: Map<string, V[]>, k: string, v: V) => m.set(k, [...(m.get(k) ?? []), v]);
  const volumes = new Map<string, StoredEvidence[]>();
  const images = new Map<string, string[]>();
  const started = new Map<string, string[]>();
  for (const e of evidence) {
    if (keyKind(e.subject_key) !== 'service') continue;
    const who = find(e.subject_key);
    if (e.evidence_kind === 'volume-mount' && e.attributes.type === 'volume' && e.object_key)
      add(volumes, who, e);
    else if (e.evidence_kind === 'image-reference' && typeof e.attributes.repo === 'string')
      add(images, who, e.attributes.repo);
    else if (e.evidence_kind === 'service-declared')
      for (const f of [e.attributes.command, e.attributes.entrypoint])
        if (Array.isArray(f)) add(started, who, f.map(String).join(' '));
  }
  const out: Array<[StoredEvidence, StoredEvidence]> = [];
  const done = new Set<string>();
  for (const wait of waits) {
    const reader = find(wait.subject_key);
    const writer = find(wait.object_key!);
    if (reader === writer || done.has(`${reader}\u0000${writer}`)) continue;
    done.add(`${reader}\u0000${writer}`);
    // One image: the writer is the program's own setup step, not another program.
    const own = new Set(images.get(writer) ?? []);
    if (!(images.get(reader) ?? []).some((i) => own.has(i))) continue;
    const written = new Set(
      (volumes.get(writer) ?? [])
        .filter((m) => m.attributes.read_only !== true)
        .map((m) => m.object_key),
    );
    const mount = (volumes.get(reader) ?? []).find((m) => written.has(m.object_key));
    if (!mount) continue;
    const command = (started.get(writer) ?? []).join('\n');
    for (const e of evidence) {
      if (e.evidence_kind !== 'env-reference' || e.relationship_kind !== 'connects_to') continue;
      if (e.object_key === null || find(e.subject_key) !== writer) continue;
      if (typeof e.attributes.variable !== 'string') continue;
      if (!namesVariable(command, e.attributes.variable)) continue;
      if (find(e.object_key) === reader) continue;
      const volume = keyName(mount.object_key!);
      out.push([
        {
          ...e,
          subject_key: mount.subject_key,
          summary: `${e.summary}; written into volume ${volume}, read by ${keyName(reader)}`,
          attributes: { ...e.attributes, written_by: e.subject_key, written_volume: volume },
        },
        mount,
      ]);
    }
  }
  return out;
}
