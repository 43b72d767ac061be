/**
 * Which source type a file belongs to: `cicd` (pipeline definitions), `cloud` (deployment and
 * infrastructure configuration), `code` (source and package manifests) or null (docs, assets).
 * Pure and path-based, with a peek at YAML content to tell Kubernetes manifests apart.
 */
import path from 'node:path';
import { isComposeHead } from '../../analysis/cloud/compose-head';
import { isEnvTaggedConfig } from '../../analysis/cloud/compose-env-sharing';
import {
  isAlloyConfig,
  isClickHouseServerConfig,
  isGrafanaDatasources,
  isMountedOnlySettings,
} from '../../analysis/code/settings-files';

export type SourceType = 'code' | 'cloud' | 'cicd';

const CICD_PATTERNS: RegExp[] = [
  /^\.github\/workflows\/[^/]+\.ya?ml$/,
  // Composite actions: their steps run in the jobs that use them.
  /^\.github\/actions\/(?:[^/]+\/)*action\.ya?ml$/,
  /(^|\/)\.gitlab-ci\.ya?ml$/,
  /^\.circleci\/config\.ya?ml$/,
  /(^|\/)azure-pipelines\.ya?ml$/,
  /(^|\/)Jenkinsfile(\.[\w-]+)?$/,
  /(^|\/)cloudbuild\.ya?ml$/,
  /(^|\/)bitbucket-pipelines\.ya?ml$/,
  /^\.buildkite\/pipeline\.ya?ml$/,
  /^\.drone\.ya?ml$/,
];

const CLOUD_PATTERNS: RegExp[] = [
  /(^|\/)Dockerfile(\.[\w.-]+)?$/,
  // Podman's and Buildah's name for a Dockerfile (the cloud analyzer reads both).
  /(^|\/)Containerfile(\.[\w.-]+)?$/,
  /(^|\/)[\w.-]*\.Dockerfile$/,
  // Compose files, their variants (`docker-compose-o11y.yaml`) and Swarm stack files (compose format).
  /(^|\/)((docker-)?compose|docker-stack)([.-][\w.-]+)?\.ya?ml$/,
  // The .env file Compose interpolates compose files from.
  /(^|\/)\.env$/,
  // Environment files a compose `env_file:` names (`common.env`, `.env.production`).
  /(^|\/)[\w-][\w.-]*\.env$/,
  /(^|\/)\.env\.(?!(example|sample|template|tmpl|dist)$)[\w-]+$/,
  // Their committed templates (`.env.example`): read only for an `env_file` the repository does
  // not hold, as the values it documents (analysis/cloud/compose.ts).
  /(^|\/)([\w-][\w.-]*)?\.env\.(example|sample|template|tmpl|dist)$/,
  // The template of a named env file (`.env.orders.sample` for `env_file: .env.orders`).
  /(^|\/)\.env\.[\w-]+\.(example|sample|template|tmpl|dist)$/,
  // The same templates named `env.example` or `example.env` (analysis/cloud/env-templates.ts).
  /(^|\/)env\.(example|sample|template|tmpl|dist)$/,
  // A container's entrypoint script (`docker-entrypoint.sh`): the defaults it exports before it
  // fills the image's templates and starts the program (analysis/cloud/proxies.ts).
  /(^|\/)[\w.-]*entrypoint[\w.-]*\.(sh|bash)$/i,
  // Reverse-proxy configuration: nginx `*.conf` and the `*.conf.template` files the nginx image
  // fills with envsubst, and Envoy bootstrap files.
  /(^|\/)[^/]+\.conf(\.template|\.tmpl)?$/,
  /(^|\/)[\w.-]*envoy[\w.-]*\.ya?ml(\.template|\.tmpl)?$/,
  // Caddy's configuration (`Caddyfile`, `Caddyfile.prod`, `site.caddyfile`): reverse_proxy routes.
  /(^|\/)Caddyfile([.-][\w.-]+)?$/i,
  /\.caddyfile$/i,
  // Consul Template files (`*.ctmpl`): a proxy rendered from a Consul catalog
  // (analysis/cloud/consul-template.ts).
  /\.ctmpl$/i,
  /\.tf$/,
  /\.tfvars$/,
  /\.tf\.json$/,
  /(^|\/)Chart\.ya?ml$/,
  /(^|\/)values([.-][\w.-]+)?\.ya?ml$/,
  // What deploys a chart with its values: helmfile releases and their values folders.
  /(^|\/)helmfile(\.[\w-]+)*\.ya?ml(\.gotmpl)?$/,
  /(^|\/)helmfile\.d\/[^/]+\.ya?ml(\.gotmpl)?$/,
  /(^|\/)values\/[^/]+\.ya?ml(\.gotmpl)?$/,
  /(^|\/)kustomization\.ya?ml$/,
  /(^|\/)templates\/[^/]+\.(ya?ml|tpl)$/,
  /(^|\/)(k8s|kubernetes|manifests|deploy|deployment|helm|charts)\/.+\.ya?ml$/,
  /(^|\/)serverless\.ya?ml$/,
  // Microsoft Tye's application description (analysis/cloud/tye.ts).
  /(^|\/)tye([.-][\w-]+)?\.ya?ml$/,
  /(^|\/)template\.ya?ml$/,
  /\.bicep$/,
  // Secrets files a secret store serves (a Dapr local-file secret store's `secrets.json`): the
  // addresses they hold are read with the store's component (analysis/cloud/dapr-secrets.ts).
  /(^|\/)[\w.-]*secrets\.json$/,
  /(^|\/)Pulumi(\.[\w-]+)?\.ya?ml$/,
  // What the repository says it deploys (analysis/cloud/deploy-commands.ts): Makefile recipes and
  // deploy scripts (`deploy-staging.sh`, a script in a `k8s/` folder); the root README below.
  /(^|\/)(GNUmakefile|[Mm]akefile)$/,
  /(^|\/)(k8s|kubernetes|helm|charts|deploy|deployment|deployments|manifests)\/(.+\/)?[^/]+\.(sh|bash|ps1)$/i,
  /(^|\/)(deploy|install)[\w.-]*\.(sh|bash|ps1)$/i,
  // A script named for Compose (`run-docker-compose.ps1`): the files it runs with `-f`.
  /(^|\/)[\w.-]*compose[\w.-]*\.(sh|bash|ps1)$/i,
];

const CODE_EXTENSIONS = new Set([
  '.ts',
  '.tsx',
  '.js',
  '.jsx',
  '.mjs',
  '.cjs',
  '.go',
  '.py',
  '.java',
  '.kt',
  '.kts',
  '.scala',
  '.cs',
  '.fs',
  '.rb',
  '.php',
  '.rs',
  '.c',
  '.h',
  '.cc',
  '.cpp',
  '.hpp',
  '.swift',
  '.m',
  '.ex',
  '.exs',
  '.erl',
  '.clj',
  '.dart',
  '.lua',
  '.sql',
  '.proto',
  '.graphql',
  '.sh',
  '.vue',
  '.svelte',
]);

const CODE_MANIFESTS = new Set([
  'package.json',
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'go.mod',
  'go.sum',
  'requirements.txt',
  'pyproject.toml',
  'Pipfile',
  'poetry.lock',
  'setup.py',
  'setup.cfg',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'Cargo.toml',
  'Cargo.lock',
  'Gemfile',
  'Gemfile.lock',
  // Lockfiles of every ecosystem (lockfile-present reads them; issue 30).
  'npm-shrinkwrap.json',
  'bun.lock',
  'Pipfile.lock',
  'pdm.lock',
  'uv.lock',
  'packages.lock.json',
  'gradle.lockfile',
  'libs.versions.toml',
  'go.work',
  'go.work.sum',
  'composer.lock',
  'composer.json',
  'mix.exs',
  'tsconfig.json',
  'Makefile',
  // CMake's build description: the executables it builds (analysis/code/entry-settings.ts).
  'CMakeLists.txt',
  'CODEOWNERS',
]);

/**
 * Application configuration the code reads (Spring `application*.properties|yml`, .NET
 * `appsettings*.json`): its `${X:default}` placeholders and settings are the code's reads.
 */
const CODE_CONFIG = /^(application|bootstrap|appsettings)([-.][\w.-]+)?\.(properties|ya?ml|json)$/i;
/**
 * A program's own settings file (`config.yml`, `config.example.yml`, `settings.toml`): what a
 * container is given to read (a compose bind mount), its addresses the container's connections
 * (analysis/reconcile-mounted.ts). Outside the repository's tooling folders.
 */
const PROGRAM_CONFIG = /^(config|settings)([-.][\w.-]+)?\.(ya?ml|json|toml)$/i;
/** A JSON object entry whose value opens with (or soon holds) an address member. */
const ENTRY_ADDRESS_HEAD =
  /"[\w.-]+"\s*:\s*\{[^{}]{0,200}?"(addr|address|host|hostname)"\s*:\s*"[a-z]/i;
const TOOLING_DIR = /(^|\/)\.[^/]+\//;

/** Top-level Spring Boot / Spring Cloud keys (`spring:`, `spring.datasource.url=`, `eureka:`, `zuul:`). */
const SPRING_CONFIG_HEAD = /^(spring|eureka|zuul|feign|ribbon|hystrix)(:|\.[\w.-]+\s*[:=])/m;

/** The root README (deploy instructions are read from it only when it holds a deploy command). */
const ROOT_README = /^README(\.(md|markdown|rst|txt))?$/i;
/** A command that deploys the system: what the variant chooser takes as the deployed variant. */
const DEPLOY_COMMAND =
  /\b(kubectl|oc)\s+apply\b|\b(docker[- ]compose|podman-compose)\b[^\n]*\s(up|run|start|create|deploy)\b|\bhelm\s+(upgrade|install)\s|\bskaffold\s+(run|dev|deploy)\b/;

/**
 * How many leading bytes of a file classifyPath needs as its `head`: 4 KiB of YAML (to tell a
 * manifest apart) and of JSON (a Kafka Connect connector configuration), 64 KiB of the root
 * README (to find a deploy command), none of anything else.
 */
export function headBytes(filePath: string): number {
  if (/\.(ya?ml|json)$/i.test(filePath)) return 4096;
  // XML: 1 KiB, enough for the root element of a ClickHouse server configuration.
  if (/\.xml$/i.test(filePath)) return 1024;
  return ROOT_README.test(filePath) ? 65536 : 0;
}

/**
 * Classifies by path alone; `head` (the first headBytes of the file) refines unknown YAML, and
 * makes the root README a deployment description (cloud) when it holds a deploy command.
 */
export function classifyPath(filePath: string, head?: string): SourceType | null {
  const known = classifyKnown(filePath, head);
  if (known !== null) return known;
  // A YAML or JSON file of any name whose head names a sibling container by URL, or a Grafana
  // dskit server's configuration: settings read only for a container given that very file
  // (analysis/code/settings-files.ts, analysis/reconcile-mounted.ts).
  return !TOOLING_DIR.test(filePath) && isMountedOnlySettings(filePath, head) ? 'code' : null;
}

/**
 * Whether a file is code only as settings a container may be given by name (a compose bind
 * mount of the file itself), not for its name or kind: nothing reads it unless one is.
 */
export function isMountedOnlySettingsFile(filePath: string, head?: string): boolean {
  // A ClickHouse server configuration: read only for the ClickHouse container given it.
  if (isClickHouseServerConfig(filePath, head)) return true;
  return (
    !TOOLING_DIR.test(filePath) &&
    isMountedOnlySettings(filePath, head) &&
    classifyKnown(filePath, head) === null
  );
}

function classifyKnown(filePath: string, head?: string): SourceType | null {
  if (CICD_PATTERNS.some((p) => p.test(filePath))) return 'cicd';
  if (CLOUD_PATTERNS.some((p) => p.test(filePath))) return 'cloud';
  if (ROOT_README.test(filePath)) return head && DEPLOY_COMMAND.test(head) ? 'cloud' : null;
  const base = path.posix.basename(filePath);
  if (CODE_MANIFESTS.has(base) || base.endsWith('.csproj') || base.endsWith('.sln')) return 'code';
  // A Grafana Alloy configuration (`config.alloy`): the settings of the container given it.
  if (isAlloyConfig(filePath) && !TOOLING_DIR.test(filePath)) return 'code';
  // A ClickHouse server configuration (`config.d/config.xml`): the settings of the ClickHouse
  // container given it, in a tooling folder too (a developer environment's `.devenv/`).
  if (isClickHouseServerConfig(filePath, head)) return 'code';
  // Gradle's per-configuration lockfiles (`gradle/dependency-locks/*.lockfile`).
  if (base.endsWith('.lockfile')) return 'code';
  if (CODE_CONFIG.test(base)) return 'code';
  // (A Kubernetes-style manifest named `settings.yaml`, a Dapr component, stays cloud below.)
  if (
    PROGRAM_CONFIG.test(base) &&
    !TOOLING_DIR.test(filePath) &&
    !isManifestHead(head) &&
    !isComposeHead(head)
  )
    return 'code';
  // Spring classpath resources and config-server backends (`shared/orders.yml`, a config repo):
  // settings an application reads (analysis/code/spring-cloud.ts).
  if (
    /\.(ya?ml|properties)$/i.test(base) &&
    (/(^|\/)src\/main\/resources\//.test(filePath) ||
      (head !== undefined && SPRING_CONFIG_HEAD.test(head)))
  )
    return 'code';
  const ext = path.posix.extname(filePath).toLowerCase();
  if (CODE_EXTENSIONS.has(ext)) return 'code';
  // A Grafana data source provisioning file: the settings of the Grafana container given it
  // (analysis/code/settings-files.ts, analysis/reconcile-mounted.ts).
  if (head !== undefined && isGrafanaDatasources(filePath, head)) return 'code';
  // Kubernetes-style manifests, and compose files named otherwise (`pwd.yml`, by content).
  if ((ext === '.yaml' || ext === '.yml') && (isManifestHead(head) || isComposeHead(head)))
    return 'cloud';
  // A product's YAML configuration taking values from the environment by tag (`!env VAR`): read
  // with the compose files that mount it, as the env variables the container reads.
  if (head !== undefined && isEnvTaggedConfig(filePath, head) && !TOOLING_DIR.test(filePath))
    return 'cloud';
  // A Kafka Connect connector configuration: what the worker it is registered with connects to.
  if (ext === '.json' && head !== undefined && /"connector\.class"\s*:/.test(head)) return 'cloud';
  // Settings with an entry per unit holding its address (`"user-service": {"addr": "user-service"`):
  // what the programs that name an entry connect to (analysis/code/entry-settings.ts).
  if (ext === '.json' && head !== undefined && ENTRY_ADDRESS_HEAD.test(head)) return 'code';
  return null;
}

/** The head of a YAML file declares an `apiVersion` and a `kind` (a Kubernetes-style object). */
function isManifestHead(head: string | undefined): boolean {
  return head !== undefined && /^\s*apiVersion:\s*\S+/m.test(head) && /^\s*kind:\s*\S+/m.test(head);
}
