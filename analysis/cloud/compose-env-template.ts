/**
 * The committed env template of a Compose project (docs/decisions.md, "The compose project's env
 * template documents its interpolated values"). Compose interpolates `${VAR}` from the `.env` of
 * the project folder; a repository that commits none documents the values in a template the user
 * copies to `.env` (`deploy.env`, `.env.example`, "Copy this file to .env"). Such a file is known
 * by what it holds rather than its name alone: a committed `*.env` file or `.env` template
 * (`.env.example`...) in the compose file's folder that defines most of the variables the compose
 * file interpolates without a default. Its values may themselves reference earlier variables of
 * the file (`postgres://${POSTGRES_USER}@${POSTGRES_HOST}:5432/db`), resolved from the same file.
 *
 * A documented value, not a deployed one: an address it gives is kept only when it names a
 * service of the project (its documented wiring); its other values (a public URL, an example
 * DSN, `localhost`) point at nothing, and a value it resolves names no service by its variable.
 */
import type { SourceFile } from '../evidence';
import { basename, dirname } from '../shared/paths';
import { compareStrings } from '../shared/text';
import { interpolate, parseDotenv } from './compose-values';
import { isEnvTemplate } from './env-templates';
import { envReferences, type EnvFinding, type HostResolver } from './env';

/** A committed env file beside the compose file: `deploy.env`, `prod.env` (not `.env` itself). */
const ENV_FILE = /^[\w-][\w.-]*\.env$/i;
/** `${VAR}` or `${VAR:?error}` (a value the user must give), not `${VAR:-default}`. */
const REQUIRED = /(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?\?[^}]*)?\}/g;

export interface ProjectEnvTemplate {
  path: string;
  vars: Map<string, string>;
}

/** The variables a compose file interpolates without a default. */
function requiredVariables(text: string): Set<string> {
  return new Set([...text.matchAll(REQUIRED)].map((m) => m[1]!));
}

/**
 * The env template of the project of `compose` (its folder has no `.env`): the candidate
 * defining the most of its required variables, when that is more than half of them.
 */
export function projectEnvTemplate(
  compose: SourceFile,
  files: SourceFile[],
): ProjectEnvTemplate | null {
  const required = requiredVariables(compose.text);
  if (required.size === 0) return null;
  const dir = dirname(compose.path);
  let best: { file: SourceFile; vars: Map<string, string>; covered: number } | null = null;
  const candidates = files
    .filter((f) => dirname(f.path) === dir)
    .filter((f) => ENV_FILE.test(basename(f.path)) || isEnvTemplate(f.path))
    .sort((a, b) => compareStrings(a.path, b.path));
  for (const file of candidates) {
    const vars = parseDotenv(file.text);
    const covered = [...required].filter((v) => vars.has(v)).length;
    if (covered * 2 > required.size && (!best || covered > best.covered))
      best = { file, vars, covered };
  }
  return best ? { path: best.file.path, vars: best.vars } : null;
}

/**
 * The addresses the template documents for an environment entry whose value Compose would leave
 * unresolved (`APPFLOWY_DATABASE_URL=${APPFLOWY_DATABASE_URL}`): null when the template does not
 * resolve it either, else the references to the project's own services (possibly none).
 */
export function documentedReferences(
  variable: string,
  value: string,
  template: ProjectEnvTemplate,
  resolver: HostResolver,
): EnvFinding[] | null {
  const documented = interpolate(value, template.vars);
  if (documented.includes('$')) return null;
  return envReferences(variable, documented, resolver)
    .filter((f) => f.kind === 'env-reference' && typeof f.attributes.host === 'string')
    .filter((f) => {
      const r = resolver(String(f.attributes.host).toLowerCase());
      return r !== null && r.via !== 'unresolved-short-name';
    })
    .map((f) => ({
      ...f,
      summary: `${f.summary} (the value ${template.path} documents)`,
      attributes: { ...f.attributes, interpolated: 'env-template', documented_by: template.path },
    }));
}
