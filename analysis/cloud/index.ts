/**
 * Cloud analyzers: docker-compose, Kubernetes, Helm, Kustomize, Terraform and Dockerfiles. Pure
 * over the files given; never throws for bad input, reporting gaps instead.
 */
import type { AnalyzerGap, AnalyzerOutput, Evidence, SourceFile } from '../evidence';
import { sortOutput, analyzerErrorGap } from '../shared/evidence';
import { basename, dirname, isDockerfile, sortByPath } from '../shared/paths';
import { builtEngines, type BuiltEngine } from './built-images';
import { analyzeDeployDocuments, deployDocumentKind } from './deploy-commands';
import { analyzeBicep } from './bicep';
import { analyzeCompose } from './compose';
import { daprSecretHostEvidence } from './dapr-secrets';
import { readComposeFiles } from './compose-merge';
import { isComposeHead } from './compose-head';
import { analyzeDockerfile } from './dockerfile';
import { analyzeHelm, chartDirs, helmRole } from './helm';
import { analyzeKubernetes } from './kubernetes';
import { generatedObjects } from './kubernetes-cluster';
import { analyzeKustomize, isKustomization } from './kustomize';
import { isImageTemplate } from './image-templates';
import { isConsulTemplate } from './consul-template';
import { analyzeProxies, proxyKindOf } from './proxies';
import { analyzeSkaffold, isSkaffold } from './skaffold';
import { dotenvSecrets } from './settings-secrets';
import { analyzeEnvTemplate, isEnvTemplate } from './env-templates';
import { analyzeTerraform } from './terraform';
import { analyzeTye, isTye } from './tye';

export type CloudFormat =
  | 'compose'
  | 'dotenv'
  | 'env-template'
  | 'terraform'
  | 'bicep'
  | 'dockerfile'
  | 'helm'
  | 'kustomize'
  | 'kubernetes'
  | 'proxy'
  | 'skaffold'
  | 'tye'
  | 'deploy-document'
  | 'entrypoint'
  | 'image-template'
  | 'consul-template';

const COMPOSE = /^((docker-)?compose|docker-stack)([.-][^/]*)?\.ya?ml$/i;
const YAML = /\.ya?ml$/i;
/** CI definitions belong to the CI analyzers. */
const CI_PATHS = /(^|\/)(\.github|\.circleci|\.gitlab)\/|(^|\/)\.gitlab-ci\.ya?ml$/;

/** Which cloud analyzer reads a file, or null. `charts` are the directories holding a Chart.yaml. */
export function cloudFormat(file: SourceFile, charts: Set<string>): CloudFormat | null {
  const name = basename(file.path);
  // A container's entrypoint script (even in a deploy folder): the defaults it exports before it
  // fills the image's templates, read with the proxy files.
  if (/entrypoint[\w.-]*\.(sh|bash)$/i.test(name)) return 'entrypoint';
  // The root README, Makefiles and deploy scripts: the commands they say deploy the system.
  if (deployDocumentKind(file.path)) return 'deploy-document';
  if (COMPOSE.test(name)) return 'compose';
  // The project `.env` file Compose interpolates from; read with the compose files beside it.
  if (name === '.env') return 'dotenv';
  // A committed template of an environment file: the addresses a unit run without a deployment
  // is documented to receive (analysis/reconcile-env-templates.ts).
  if (isEnvTemplate(file.path)) return 'env-template';
  if (/\.tf$/.test(name)) return 'terraform';
  if (/\.bicep$/.test(name)) return 'bicep';
  if (isDockerfile(file.path)) return 'dockerfile';
  if (helmRole(file.path, charts)) return 'helm';
  if (isKustomization(file.path)) return 'kustomize';
  // nginx configuration (and templates) and Envoy bootstrap files: reverse-proxy routes.
  if (proxyKindOf(file)) return 'proxy';
  // Consul Template files: a proxy rendered for the services of a Consul catalog.
  if (isConsulTemplate(file.path)) return 'consul-template';
  // What `skaffold run` deploys and builds: read for the primary deployment variant.
  if (isSkaffold(file.path)) return 'skaffold';
  // What `tye run` starts (Microsoft Tye): services read like compose services.
  if (isTye(file.path) && /^services\s*:/m.test(file.text)) return 'tye';
  // A compose file named otherwise (`pwd.yml`, `stack.yml`), known by its content.
  if (YAML.test(name) && !CI_PATHS.test(file.path) && isComposeHead(file.text)) return 'compose';
  // Other YAML is read as Kubernetes when it looks like a manifest (apiVersion and kind keys).
  if (
    YAML.test(name) &&
    !CI_PATHS.test(file.path) &&
    /^\s*apiVersion\s*:/m.test(file.text) &&
    /^\s*kind\s*:/m.test(file.text)
  ) {
    return 'kubernetes';
  }
  // A configuration template an image renders from its environment at start (Go templates with
  // `.Env.X` or `getenv`): its defaults are addresses of the service running the image.
  if (!YAML.test(name) && isImageTemplate(file.text)) return 'image-template';
  return null;
}

/** Runs every cloud analyzer over the files that belong to it; output sorted by path, then line. */
export async function analyzeCloud(files: SourceFile[]): Promise<AnalyzerOutput> {
  const charts = chartDirs(files);
  const groups = new Map<CloudFormat, SourceFile[]>();
  for (const f of sortByPath(files)) {
    const format = cloudFormat(f, charts);
    if (!format) continue;
    const group = groups.get(format);
    if (group) group.push(f);
    else groups.set(format, [f]);
  }
  const evidence: Evidence[] = [];
  const gaps: AnalyzerGap[] = [];
  // A loop, not push(...list): spreading 100,000 records as arguments overflows the stack.
  const collect = (o: AnalyzerOutput) => {
    for (const e of o.evidence) evidence.push(e);
    for (const g of o.gaps) gaps.push(g);
  };
  const guard = async (
    format: CloudFormat,
    list: SourceFile[],
    run: () => AnalyzerOutput | Promise<AnalyzerOutput>,
  ) => {
    try {
      collect(await run());
    } catch (err) {
      // A bug in one analyzer must not hide the others' findings.
      for (const f of list) gaps.push(analyzerErrorGap(f.path, `${format} analyzer`, err));
    }
  };
  const of = (format: CloudFormat) => groups.get(format) ?? [];
  await guard('compose', of('compose'), () => analyzeCompose(of('compose'), of('dotenv'), files));
  for (const f of of('dotenv')) await guard('dotenv', [f], () => dotenvSecrets(f));
  // A committed `.env` beside a template is the file in effect: the template is not read.
  const dotenvDirs = new Set(of('dotenv').map((f) => dirname(f.path)));
  for (const f of of('env-template'))
    if (!dotenvDirs.has(dirname(f.path)))
      await guard('env-template', [f], () => analyzeEnvTemplate(f));
  await guard('kubernetes', of('kubernetes'), () =>
    withTemplateGaps(of('kubernetes'), (list) =>
      analyzeKubernetes(
        list,
        generatedObjects(of('kustomize'), files),
        list.length ? builtImagesOf(files) : undefined,
      ),
    ),
  );
  await guard('helm', of('helm'), () =>
    analyzeHelm(of('helm'), files, of('helm').length ? builtImagesOf(files) : undefined),
  );
  await guard('kustomize', of('kustomize'), () => analyzeKustomize(of('kustomize')));
  await guard('terraform', of('terraform'), () => analyzeTerraform(of('terraform')));
  // Bicep describes the deployment when nothing else does (docs/decisions.md, "Bicep stores"):
  // beside a compose, Kubernetes or Helm deployment it is a second variant, left out and said so.
  const otherDeployment = ['compose', 'kubernetes', 'helm'].some(
    (f) => of(f as CloudFormat).length,
  );
  await guard('bicep', of('bicep'), () =>
    otherDeployment
      ? {
          evidence: [],
          gaps: of('bicep').map((f) => ({
            path: f.path,
            reason: 'secondary_deployment_variant',
            message:
              'Bicep template beside a compose/Kubernetes/Helm deployment: read as a second deployment variant, its resources are not placed in the graph',
          })),
        }
      : analyzeBicep(of('bicep')),
  );
  await guard('skaffold', of('skaffold'), () => analyzeSkaffold(of('skaffold')));
  await guard('tye', of('tye'), () => analyzeTye(of('tye')));
  await guard('deploy-document', of('deploy-document'), () =>
    analyzeDeployDocuments(of('deploy-document'), files),
  );
  for (const f of of('dockerfile')) await guard('dockerfile', [f], () => analyzeDockerfile(f));
  // Proxy files are attributed to the service that mounts or builds them; Traefik routes are
  // read from compose labels, so this runs with no proxy file too.
  await guard('proxy', of('proxy'), () =>
    analyzeProxies(of('proxy'), {
      compose: of('compose'),
      dockerfiles: of('dockerfile'),
      dotenv: of('dotenv'),
      entrypoints: of('entrypoint'),
      envTemplates: of('env-template'),
      templates: of('image-template'),
      consulTemplates: of('consul-template'),
    }),
  );
  // The addresses Dapr local-file secret stores hold (read by the apps that load them).
  await guard('kubernetes', [], () => ({ evidence: daprSecretHostEvidence(files), gaps: [] }));
  return sortOutput({ evidence, gaps });
}

/** What an image the repository builds runs (compose builds, Skaffold artifacts). */
function builtImagesOf(files: SourceFile[]): BuiltEngine {
  const charts = new Set<string>();
  const byPath = new Map(files.map((f) => [f.path, f]));
  const compose = files.filter((f) => cloudFormat(f, charts) === 'compose');
  return builtEngines(readComposeFiles(compose, byPath).parsed, byPath);
}

/** Manifests with Go template syntax outside a chart cannot be read as YAML either. */
function withTemplateGaps(
  files: SourceFile[],
  run: (files: SourceFile[]) => AnalyzerOutput,
): AnalyzerOutput {
  const templated = files.filter((f) =>
    /\{\{[^}]*\}\}/.test(f.text.replace(/\$\{\{[^}]*\}\}/g, '')),
  );
  const skip = new Set(templated);
  const out = run(files.filter((f) => !skip.has(f)));
  return {
    evidence: out.evidence,
    gaps: [
      ...out.gaps,
      ...templated.map((f) => ({
        path: f.path,
        reason: 'template_not_rendered',
        message: 'manifest uses Go template syntax outside a Helm chart and is not rendered',
      })),
    ],
  };
}

export { analyzeCompose } from './compose';
export { analyzeDockerfile } from './dockerfile';
export { analyzeHelm } from './helm';
export { analyzeKubernetes } from './kubernetes';
export { analyzeKustomize } from './kustomize';
export { analyzeProxies } from './proxies';
export { analyzeTerraform } from './terraform';
