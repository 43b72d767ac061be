/**
 * One `env_file` given to containers of different programs (docs/decisions.md, "A shared env
 * file's framework variables"). A self-hosting stack often hands the env file written for its
 * application (`DJANGO_CACHE_LOCATION=redis://cache:6379/1`, `CELERY_BROKER=redis://...`) to a
 * third-party product image too, because that file also holds the product's own settings
 * (`PS_DATABASE_URI`). The product reads its settings through the configuration the stack mounts
 * into it, which names the variables it substitutes (`uri: !env PS_DATABASE_URI`,
 * `${PS_PORT}`); the application framework's variables of the file are not its reads.
 */
import type { SourceFile } from '../evidence';
import { parseImageRef } from '../shared/images';
import { dirname, isWithin, joinPath } from '../shared/paths';
import { asArray, asString, isRecord } from '../shared/values';
import type { ComposeFile } from './compose-merge';
import { buildContext, interpolate } from './compose-values';

/**
 * Prefixes of variables read by an application framework's settings code (or bound by the
 * framework by name): Django, Celery, Flask, Rails, Sidekiq, Laravel, Symfony, Spring, Quarkus,
 * Micronaut, ASP.NET Core, NextAuth. The value is the word the framework's own configuration
 * files hold (`django.` in a settings module, `spring:` in `application.yml`). `NODE_` is not
 * one: the Node runtime reads `NODE_OPTIONS` in every Node image, a third-party one included.
 */
const FRAMEWORK_PREFIXES: Record<string, string> = {
  DJANGO: 'django',
  CELERY: 'celery',
  FLASK: 'flask',
  RAILS: 'rails',
  SIDEKIQ: 'sidekiq',
  LARAVEL: 'laravel',
  SYMFONY: 'symfony',
  SPRING: 'spring',
  QUARKUS: 'quarkus',
  MICRONAUT: 'micronaut',
  ASPNETCORE: 'aspnetcore',
  NEXTAUTH: 'nextauth',
};

/** Files a mounted folder gives as configuration (not program source). */
const CONFIG_FORMAT = /\.(ya?ml|json|toml|ini|conf|cfg|properties|env|xml|hcl)$/i;

/**
 * A YAML value taken from the environment by a custom tag (`uri: !env PS_DATABASE_URI`; the
 * `!ENV VAR` / `!ENV [VAR, default]` of pyyaml-env-tag).
 */
const ENV_TAG = /:[ \t]*!(?:env|ENV)[ \t]+(?:\[[ \t]*)?['"]?[A-Za-z_][A-Za-z0-9_]*/;

/**
 * A YAML configuration file whose head takes values from the environment by tag: a product's
 * settings, mounted into its container, naming the env variables the product reads.
 */
export function isEnvTaggedConfig(path: string, head: string): boolean {
  return /\.ya?ml$/i.test(path) && ENV_TAG.test(head);
}

/** What a compose service runs: its image repository, else its build folder. */
export function programOf(
  image: { repo: string } | null,
  build: Record<string, unknown> | null,
): string | null {
  if (build) return typeof build.context_dir === 'string' ? `build:${build.context_dir}` : null;
  return image ? image.repo.toLowerCase().replace(/^docker\.io\//, '') : null;
}

/**
 * Per env file (repository path), the programs of every container of the compose files given it
 * (`env_file`, resolved against each compose file's folder, interpolated with its `.env`).
 */
export function envFilePrograms(
  parsed: ComposeFile[],
  varsOf: (cf: ComposeFile) => Map<string, string>,
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const cf of parsed) {
    const vars = varsOf(cf);
    for (const svc of Object.values(cf.services)) {
      if (!isRecord(svc) || svc.env_file === undefined) continue;
      const spec = asString(svc.image);
      const image = spec === null ? null : parseImageRef(interpolate(spec, vars));
      const program = programOf(image, buildContext(cf.file.path, svc.build, vars));
      if (program === null) continue;
      const list = typeof svc.env_file === 'string' ? [svc.env_file] : asArray(svc.env_file);
      for (const entry of list) {
        const written = isRecord(entry) ? asString(entry.path) : asString(entry);
        const path = written ? joinPath(dirname(cf.file.path), interpolate(written, vars)) : null;
        if (path === null) continue;
        const set = out.get(path) ?? new Set<string>();
        set.add(program);
        out.set(path, set);
      }
    }
  }
  return out;
}

/**
 * The text of the repository's configuration files mounted into a container: each host path
 * that is a file, and the configuration-format files under each that is a folder.
 */
export function mountedConfigText(hostPaths: string[], files: Map<string, SourceFile>): string {
  const out: string[] = [];
  for (const p of hostPaths) {
    const file = files.get(p);
    if (file) {
      out.push(file.text);
      continue;
    }
    for (const [path, f] of files)
      if (isWithin(path, p) && CONFIG_FORMAT.test(path)) out.push(f.text);
  }
  return out.join('\n');
}

/** `text` names `variable` as a whole word (`!env PS_PORT`, `${PS_PORT:-8080}`, `env('PS_PORT')`). */
function namesVariable(text: string, variable: string): boolean {
  let i = text.indexOf(variable);
  while (i >= 0) {
    const before = i === 0 ? '' : text[i - 1]!;
    const after = text[i + variable.length] ?? '';
    if (!/\w/.test(before) && !/\w/.test(after)) return true;
    i = text.indexOf(variable, i + 1);
  }
  return false;
}

/** The framework a variable is named for (`DJANGO_CACHE_LOCATION` -> `django`), or null. */
export function frameworkOf(variable: string): string | null {
  const prefix = variable.split('_')[0] ?? '';
  return variable.includes('_') ? (FRAMEWORK_PREFIXES[prefix] ?? null) : null;
}

/**
 * For a service pulling an image (not built here) that is given an env file the project also
 * gives to a container of another program: the variables of that file which are not its reads.
 * Only when the service's mounted configuration names at least one variable of the file (its
 * program takes its settings from there); then a variable its configuration does not name, named
 * for an application framework whose word that configuration never holds, belongs to the other
 * program. Returns the predicate (always false when the rule does not apply).
 */
export function foreignFrameworkVariables(input: {
  /** The service pulls its image, builds nothing. */
  pulled: boolean;
  /** This service's program and every program the project gives this env file to. */
  program: string | null;
  sharers: ReadonlySet<string>;
  /** The env file's variable names. */
  variables: string[];
  /** Its mounted configuration (mountedConfigText), computed only when needed. */
  config: () => string;
}): (variable: string) => boolean {
  const none = () => false;
  if (!input.pulled || input.program === null) return none;
  if (![...input.sharers].some((p) => p !== input.program)) return none;
  const framed = input.variables.filter((v) => frameworkOf(v) !== null);
  if (framed.length === 0) return none;
  const text = input.config();
  if (text === '' || !input.variables.some((v) => namesVariable(text, v))) return none;
  return (v) => {
    const word = frameworkOf(v);
    return word !== null && !namesVariable(text, v) && !new RegExp(`\\b${word}\\b`, 'i').test(text);
  };
}
