/**
 * What a compose service is given from the repository: bind mounts (`./sentry:/etc/sentry`) and
 * `configs:` / `secrets:` whose top-level definition names a `file:`. Each becomes a
 * `volume-mount` record carrying what reconcile needs to attribute the given file's settings to
 * the container (analysis/reconcile-mounted.ts):
 * - `host_path`: the repository path given (resolved against the compose file's folder), or
 *   null when it lies outside the repository or is still a variable;
 * - `named_by_container`: the container's command, entrypoint or environment names the target
 *   (`SENTRY_CONF: /etc/sentry`, `-c /etc/taskbroker/config.yml`): its program reads it;
 * - `program`: what the container runs (its image, else its build folder), so that a folder
 *   given only to containers of one program is known to be that program's configuration.
 */
import { asArray, asString, isRecord } from '../shared/values';
import { dirname, joinPath } from '../shared/paths';
import type { PathItem } from '../shared/yaml';
import { interpolate, parseVolume } from './compose-values';

/** The variables of a committed `.env` template, used where the project has no `.env`. */
export interface EnvTemplateVars {
  path: string;
  vars: Map<string, string>;
  /** The repository holds this file, or a file under this folder. */
  holds: (path: string | null) => boolean;
}

export interface MountRecord {
  path: PathItem[];
  summary: string;
  attributes: Record<string, unknown>;
  /** A named volume the service mounts (`mounts` relationship). */
  volume: string | null;
}

/** Text the container's program is started with: command, entrypoint, environment values. */
function startText(svc: Record<string, unknown>): string[] {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else for (const x of asArray(v)) if (typeof x === 'string') out.push(x);
  };
  add(svc.command);
  add(svc.entrypoint);
  if (isRecord(svc.environment)) for (const v of Object.values(svc.environment)) add(v);
  else for (const e of asArray(svc.environment)) add(e);
  return out;
}

/** `text` names `target` or a path inside it (a whole path, not a prefix of a longer name). */
function names(text: string, target: string): boolean {
  const t = target.replace(/\/+$/, '');
  if (t === '' || t === '/') return false;
  let i = text.indexOf(t);
  while (i >= 0) {
    const before = i === 0 ? '' : text[i - 1]!;
    const after = text[i + t.length] ?? '';
    if (!/[\w.-]/.test(before) && !/[\w.-]/.test(after)) return true;
    i = text.indexOf(t, i + 1);
  }
  return false;
}

/**
 * A source under the shell's working folder (`${PWD}/fs/config.xml`, `$PWD/conf`) as the path
 * relative to the compose file's folder (`./fs/config.xml`): the folder `docker compose` is run
 * from, by the convention such a file assumes (its other relative paths resolve there too).
 */
function pwdRelative(source: string): string {
  return source.replace(/^(?:\$\{PWD\}|\$PWD(?![\w]))(?=\/|$)/, '.');
}

/** The service's mounts of the repository's files, and of named and anonymous volumes. */
export function mountRecords(
  composePath: string,
  name: string,
  svc: Record<string, unknown>,
  top: Record<string, unknown>,
  vars: Map<string, string>,
  program: string | null,
  template: EnvTemplateVars | null = null,
): MountRecord[] {
  const started = startText(svc);
  const given = (source: string | null, target: string) => {
    let written = source === null ? null : interpolate(pwdRelative(source), vars);
    // No `.env` gives the variable: the committed template beside the compose file documents it
    // (`env.example`, copied to `.env` by the user), a weaker reading said so on the record.
    const documented =
      written !== null && written.includes('$') && template !== null
        ? interpolate(written, template.vars)
        : null;
    // Only a path the repository holds: a data folder the user creates is no settings.
    const fromTemplate =
      documented !== null &&
      !documented.includes('$') &&
      template!.holds(joinPath(dirname(composePath), documented));
    if (fromTemplate) written = documented;
    // An absolute or home path is the host's, not the repository's.
    const hostPath =
      written === null || written.includes('$') || /^[/~]/.test(written)
        ? null
        : joinPath(dirname(composePath), written);
    return {
      host_path: hostPath,
      named_by_container: started.some((t) => names(t, target)),
      program,
      ...(fromTemplate && hostPath !== null ? { documented_by: template!.path } : {}),
    };
  };
  const out: MountRecord[] = [];
  asArray(svc.volumes).forEach((v, i) => {
    const m = parseVolume(v);
    if (!m) return;
    const what =
      m.type === 'bind'
        ? `host path ${m.source}`
        : m.source
          ? `volume ${m.source}`
          : 'an anonymous volume';
    out.push({
      path: ['volumes', i],
      summary: `compose service ${name} mounts ${what} at ${m.target}`,
      attributes: m.type === 'bind' ? { ...m, ...given(m.source, m.target) } : { ...m },
      volume: m.type === 'volume' && m.source ? m.source : null,
    });
  });
  for (const kind of ['configs', 'secrets'] as const) {
    const defs = isRecord(top[kind]) ? top[kind] : {};
    asArray(svc[kind]).forEach((entry, i) => {
      const ref = isRecord(entry) ? asString(entry.source) : asString(entry);
      const def = ref === null ? null : defs[ref];
      const file = isRecord(def) ? asString(def.file) : null;
      if (ref === null || file === null) return;
      const written = isRecord(entry) ? asString(entry.target) : null;
      const target = written ?? (kind === 'secrets' ? `/run/secrets/${ref}` : `/${ref}`);
      const type = kind === 'configs' ? 'config' : 'secret';
      out.push({
        path: [kind, i],
        summary: `compose service ${name} is given the ${type} ${ref} (file ${file}) at ${target}`,
        attributes: {
          type,
          source: file,
          target,
          read_only: true,
          docker_socket: false,
          ...given(file, target),
        },
        volume: null,
      });
    });
  }
  return out;
}
