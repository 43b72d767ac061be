/**
 * Compose's default container names (docs/decisions.md, "Compose replica container names"): a
 * service without `container_name` runs as containers named `<project>_<service>_<n>` (Compose
 * v1) or `<project>-<service>-<n>` (Compose v2), `n` the replica index (`--scale app=4` runs
 * `app_1` .. `app_4`). The project name is the compose file's top-level `name:`, else
 * `COMPOSE_PROJECT_NAME` of the `.env` beside it, else the folder holding the file, normalized
 * as Compose does (lower case, characters outside `a-z0-9_-` dropped). Such a host names one
 * replica of that service: the service itself, never an entity of its own.
 */
import { basename } from '../shared/paths';
import { asString } from '../shared/values';
import { interpolate } from './compose';

export interface ComposeProject {
  /** The folder holding the compose file ('' at the repository root). */
  dir: string;
  /** The file's top-level `name:`, if any. */
  name?: unknown;
  services: Record<string, unknown>;
  vars: Map<string, string>;
}

const normalize = (s: string) => s.toLowerCase().replace(/[^a-z0-9_-]/g, '');

/** The Compose project name of a compose file, or null when none can be known (the root folder). */
export function composeProjectName(p: ComposeProject): string | null {
  const raw = asString(p.name) ?? p.vars.get('COMPOSE_PROJECT_NAME') ?? null;
  const named = raw === null ? null : normalize(interpolate(raw, p.vars));
  if (named && !named.includes('$')) return named;
  const folder = p.dir === '' ? '' : normalize(basename(p.dir));
  return folder === '' ? null : folder;
}

/**
 * The compose service whose default replica container name `host` is
 * (`nginx-loadbalancing_app_3` -> `app` in folder `nginx-loadbalancing/`), or null. One service
 * only: a name two projects could produce names neither.
 */
export function replicaService(host: string, projects: ComposeProject[]): string | null {
  const m = /([_-])\d+$/.exec(host.toLowerCase());
  if (!m) return null;
  const sep = m[1]!;
  const prefix = host.toLowerCase().slice(0, m.index);
  const found = new Set<string>();
  for (const p of projects) {
    const project = composeProjectName(p);
    if (project === null) continue;
    for (const service of Object.keys(p.services))
      if (`${project}${sep}${service.toLowerCase()}` === prefix) found.add(service);
  }
  return found.size === 1 ? [...found][0]! : null;
}
