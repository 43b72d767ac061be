/**
 * Cloud Run services deployed by shell scripts, as evidence (docs/decisions.md, "`gcloud run
 * deploy` in a script declares a Cloud Run service"):
 * - `service-declared` (provider `cloud-run`) for each `gcloud run deploy <name>`, with the
 *   folder that builds it as `build_context` (reconcile joins it to that folder's code unit and
 *   Dockerfile): `--source <folder>`, else the folder a build in the same script tags the image
 *   from (`gcloud builds submit --tag <image> <folder>`, `docker build -t <image> <folder>`),
 *   else the one code unit whose folder is named like the image's last path segment;
 * - `env-reference` `connects_to` another Cloud Run service when an environment entry's value
 *   reads a variable holding that service's URL (`gcloud run services describe <name> --format
 *   'value(status.url)'`).
 * The environment entries themselves are returned by `cloudRunEnvironments` for the code rules
 * that join a variable the code reads to its deployed value (analysis/code/google-cloud-stores.ts).
 */
import { entityKey, type Evidence } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename, dirname, joinPath } from '../shared/paths';
import { imageRepo, readRunScript, variablesOf, type RunDeploy } from './cloud-run-scripts';
import type { CodeModel } from './model';

const SCRIPT = /\.(sh|bash)$/i;

/** The code unit folder a path written in a script names: from the script's folder upwards. */
function unitFolder(model: CodeModel, scriptPath: string, rel: string): string | null {
  if (rel.includes('$')) return null;
  for (let dir: string | null = dirname(scriptPath); dir !== null;) {
    const p = joinPath(dir, rel);
    if (p !== null && model.unitByDir.has(p)) return p;
    if (dir === '') break;
    dir = dirname(dir);
  }
  return null;
}

/** The one unit folder named like an image's last path segment (`.../api/api:tag` -> `api`). */
function folderOfImage(model: CodeModel, image: string): string | null {
  const last = imageRepo(image).split('/').pop() ?? '';
  if (last === '' || last.includes('$')) return null;
  const dirs = model.units.filter((u) => u.dir !== '' && basename(u.dir) === last);
  return dirs.length === 1 ? dirs[0]!.dir : null;
}

interface ScriptDeploys {
  path: string;
  deploys: Array<RunDeploy & { folder: string | null }>;
  urlVars: Map<string, string>;
}

function scriptDeploys(model: CodeModel): ScriptDeploys[] {
  const out: ScriptDeploys[] = [];
  for (const f of model.files) {
    if (!SCRIPT.test(f.path)) continue;
    const run = readRunScript(f.text);
    if (run.deploys.length === 0) continue;
    const deploys = run.deploys.map((d) => {
      const built = d.image ? run.builtFrom.get(imageRepo(d.image)) : undefined;
      const folder =
        (d.source !== null ? unitFolder(model, f.path, d.source) : null) ??
        (built !== undefined ? unitFolder(model, f.path, built) : null) ??
        (d.image !== null ? folderOfImage(model, d.image) : null);
      return { ...d, folder };
    });
    out.push({ path: f.path, deploys, urlVars: run.urlVars });
  }
  return out;
}

/**
 * Evidence of the Cloud Run services the repository's shell scripts deploy and of the
 * service-to-service addresses their environment carries.
 */
export function cloudRunDeployEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const s of scriptDeploys(model)) {
    const file = model.fileByPath.get(s.path)!;
    for (const d of s.deploys) {
      const span = { start: d.line, end: d.endLine };
      const subject = entityKey('service', d.name);
      if (d.declares)
        out.push(
          evidence(file, span, {
            source: 'cloud',
            provider: 'cloud-run',
            kind: 'service-declared',
            subject,
            summary: `${s.path} deploys Cloud Run service ${d.name}`,
            attributes: {
              platform: 'cloud-run',
              ...(d.folder !== null ? { build_context: d.folder } : {}),
              ...(d.image !== null ? { image: d.image } : {}),
            },
          }),
        );
      for (const { name, value } of d.env) {
        const target = variablesOf(value)
          .map((v) => s.urlVars.get(v))
          .find((t) => t !== undefined && t !== d.name);
        if (target === undefined) continue;
        out.push(
          evidence(file, span, {
            source: 'cloud',
            provider: 'cloud-run',
            kind: 'env-reference',
            subject,
            relationship: 'connects_to',
            object: entityKey('service', target),
            summary: `Cloud Run service ${d.name} sets ${name} to the URL of service ${target}`,
            attributes: { variable: name, via: 'cloud-run-env' },
          }),
        );
      }
    }
  }
  return out;
}

/**
 * Per code unit folder, the environment the scripts' Cloud Run deploys give it (variable ->
 * value as written): what a variable the unit's code reads holds once deployed.
 */
export function cloudRunEnvironments(model: CodeModel): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const s of scriptDeploys(model)) {
    const folderOf = new Map<string, string>();
    for (const d of s.deploys) if (d.folder !== null) folderOf.set(d.name, d.folder);
    for (const d of s.deploys) {
      const folder = d.folder ?? folderOf.get(d.name) ?? null;
      if (folder === null) continue;
      const env = out.get(folder) ?? new Map<string, string>();
      for (const { name, value } of d.env) if (!env.has(name)) env.set(name, value);
      out.set(folder, env);
    }
  }
  return out;
}
