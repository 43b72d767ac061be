/**
 * Package manifests: what each one declares (name, dependencies, workspace members, go module)
 * and the `dependency-declared` / `client-library` evidence of a unit.
 *
 * Readers are small and purpose-built (no manifest libraries are runtime dependencies):
 * package.json via a line-keeping JSON reader, go.mod / requirements.txt / build.gradle line by
 * line, pyproject.toml / Cargo.toml / Pipfile via the minimal TOML reader, pom.xml / *.csproj via
 * the small XML element reader, setup.py via the lexer (string literals of install_requires).
 *
 * Package keys are `package:<ecosystem>/<name>` with the name lowercased (PEP 503 for PyPI,
 * `groupId:artifactId` for Maven), not passed through normalizeName, so scopes and paths stay
 * readable: `package:npm/@aws-sdk/client-s3`, `package:go/github.com/jackc/pgx/v5`.
 */
import type { Evidence, SourceFile } from '../evidence';
import { evidence, type EvidenceFields } from '../shared/evidence';
import { basename } from '../shared/paths';
import {
  AWS_SERVICES,
  classifyClient,
  isGenericCloudSdk,
  pep503,
  type ClientClass,
} from './clients';
import { parseCargo } from './manifest-cargo';
import { parseGap } from './manifest-common';
import { parseCsproj } from './manifest-dotnet';
import { parseGoMod } from './manifest-go';
import { parseGradle, parsePom } from './manifest-jvm';
import { parseComposer, parsePackageJson } from './manifest-npm';
import { parsePipfile, parsePyproject, parseRequirements, parseSetupPy } from './manifest-python';
import type { Ecosystem, ManifestKind, ParsedManifest, Unit } from './model';

// ---------------------------------------------------------------------------------------------
// Recognition

/**
 * The manifest kind of a path. With the file's text, a `setup.py` counts only when it is a
 * packaging script (it names setuptools, distutils or scikit-build): a module of an application
 * that happens to be called setup.py (a Flask view of the first-run setup) declares no unit.
 */
/** The tables of a pyproject.toml that declare a package, its build or its dependencies. */
const PYPROJECT_PACKAGE =
  /^[ \t]*\[\[?[ \t]*(project|build-system|dependency-groups|tool\.(poetry|pdm|hatch|flit|uv|setuptools|maturin|scikit-build))(?![\w-])/m;

export function manifestKindOf(path: string, text?: string): ManifestKind | null {
  const base = basename(path);
  switch (base) {
    case 'setup.py':
      return text === undefined || /\b(setuptools|distutils|skbuild)\b/.test(text) ? base : null;
    // A pyproject.toml holding only tools' settings (`[tool.black]`, `[tool.ruff]`) declares no
    // package: it configures linters, it names and builds nothing.
    case 'pyproject.toml':
      return text === undefined || PYPROJECT_PACKAGE.test(text) ? base : null;
    case 'package.json':
    case 'go.mod':
    case 'Pipfile':
    case 'pom.xml':
    case 'Cargo.toml':
    case 'composer.json':
      return base;
    case 'build.gradle':
    case 'build.gradle.kts':
      return 'build.gradle';
  }
  if (/^(requirements([-_.][\w.-]*)?|[\w-]+[-_]requirements)\.txt$/i.test(base))
    return 'requirements.txt';
  if (/\.csproj$/i.test(base)) return 'csproj';
  return null;
}

const ECOSYSTEM: Record<ManifestKind, Ecosystem> = {
  'package.json': 'npm',
  'go.mod': 'go',
  'requirements.txt': 'pypi',
  'pyproject.toml': 'pypi',
  'setup.py': 'pypi',
  Pipfile: 'pypi',
  'pom.xml': 'maven',
  'build.gradle': 'maven',
  'Cargo.toml': 'cargo',
  csproj: 'nuget',
  'composer.json': 'composer',
};

const PROVIDER: Record<ManifestKind, string> = {
  'package.json': 'npm',
  'go.mod': 'go-modules',
  'requirements.txt': 'pip',
  'pyproject.toml': 'pyproject',
  'setup.py': 'setuptools',
  Pipfile: 'pipenv',
  'pom.xml': 'maven',
  'build.gradle': 'gradle',
  'Cargo.toml': 'cargo',
  csproj: 'nuget',
  'composer.json': 'composer',
};

const LOCKFILES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  'go.sum',
  'poetry.lock',
  'Pipfile.lock',
  'pdm.lock',
  'uv.lock',
  'Cargo.lock',
  'packages.lock.json',
  'gradle.lockfile',
  'go.work.sum',
  // A Gradle version catalog pins every version a build uses (issue 30 counts it).
  'libs.versions.toml',
  'composer.lock',
  'Gemfile.lock',
]);

export function isLockfile(path: string): boolean {
  return LOCKFILES.has(basename(path)) || basename(path).endsWith('.lockfile');
}

// ---------------------------------------------------------------------------------------------
// Helpers

export function packageKey(ecosystem: Ecosystem, name: string): string {
  const n = name.trim().toLowerCase();
  return `package:${ecosystem}/${ecosystem === 'pypi' ? pep503(n) : n}`;
}

function emptyManifest(file: SourceFile, kind: ManifestKind): ParsedManifest {
  return {
    path: file.path,
    kind,
    ecosystem: ECOSYSTEM[kind],
    provider: PROVIDER[kind],
    name: null,
    nameLine: null,
    dependencies: [],
    workspaceRoot: false,
    workspaceMembers: [],
    goModule: null,
    includes: [],
    gaps: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Entry points

/** Reads one manifest. Never throws: problems become `manifest_parse_error` gaps. */
export function parseManifest(file: SourceFile, kind: ManifestKind): ParsedManifest {
  const m = emptyManifest(file, kind);
  try {
    switch (kind) {
      case 'package.json':
        parsePackageJson(file, m);
        break;
      case 'go.mod':
        parseGoMod(file, m);
        break;
      case 'requirements.txt':
        parseRequirements(file, m);
        break;
      case 'pyproject.toml':
        parsePyproject(file, m);
        break;
      case 'Pipfile':
        parsePipfile(file, m);
        break;
      case 'setup.py':
        parseSetupPy(file, m);
        break;
      case 'Cargo.toml':
        parseCargo(file, m);
        break;
      case 'pom.xml':
        parsePom(file, m);
        break;
      case 'csproj':
        parseCsproj(file, m);
        break;
      case 'build.gradle':
        parseGradle(file, m);
        break;
      case 'composer.json':
        parseComposer(file, m);
        break;
    }
  } catch (err) {
    m.gaps.push(
      parseGap(
        file.path,
        `${basename(file.path)} could not be read: ${err instanceof Error ? err.name : 'error'}`,
      ),
    );
  }
  return m;
}

/** Service hints for generic AWS SDKs in a unit's source. */
function awsServicesUsed(files: SourceFile[]): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [
    /\b(?:client|resource)\(\s*['"](s3|sqs|sns|kinesis|dynamodb)['"]/g, // boto3
    /new\s+(?:AWS\.)?(S3|SQS|SNS|Kinesis|DynamoDB)(?:\.DocumentClient)?\s*\(/g, // aws-sdk v2
    /"github\.com\/aws\/aws-sdk-go\/service\/(s3|sqs|sns|kinesis|dynamodb)"/g, // aws-sdk-go v1
    /\bAmazon(S3|SQS|SNS|Kinesis|DynamoDB)(?:Client)?Builder\b/g, // Java SDK v1
  ];
  for (const f of files) {
    for (const re of patterns) {
      for (const m of f.text.matchAll(re)) {
        const svc = (m[1] ?? '').toLowerCase();
        if (AWS_SERVICES[svc] && !found.has(svc)) found.set(svc, f.path);
      }
    }
  }
  return found;
}

/** `dependency-declared` and `client-library` evidence for one unit. */
export function manifestEvidence(
  unit: Unit,
  unitFiles: SourceFile[],
  fileByPath: Map<string, SourceFile>,
): Evidence[] {
  const out: Evidence[] = [];
  let aws: Map<string, string> | null = null;
  for (const manifest of unit.manifests) {
    const file = fileByPath.get(manifest.path);
    if (!file) continue;
    for (const dep of manifest.dependencies) {
      const object = packageKey(dep.ecosystem, dep.name);
      const version = dep.version ? ` ${dep.version}` : '';
      /** Evidence of the unit about the package, cited at the dependency's lines. */
      const add = (fields: Omit<EvidenceFields, 'source' | 'provider' | 'subject' | 'object'>) =>
        out.push(
          evidence(
            file,
            { start: dep.line, end: dep.endLine },
            { source: 'code', provider: manifest.provider, subject: unit.key, object, ...fields },
          ),
        );
      add({
        kind: 'dependency-declared',
        relationship: 'depends_on_package',
        summary: `${unit.name} depends on ${dep.ecosystem} package ${dep.name}${version}${dep.dev ? ' (dev)' : ''}`,
        attributes: {
          ecosystem: dep.ecosystem,
          package: dep.name,
          version: dep.version,
          dev: dep.dev,
          manifest: manifest.path,
          ...dep.attributes,
        },
      });
      const hints = [
        ...((dep.attributes.extras as string[] | undefined) ?? []),
        ...((dep.attributes.features as string[] | undefined) ?? []),
      ];
      const classes: { cls: ClientClass; via?: string }[] = [];
      const cls = classifyClient(dep.ecosystem, dep.name, hints);
      if (cls) classes.push({ cls });
      if (isGenericCloudSdk(dep.ecosystem, dep.name)) {
        aws ??= awsServicesUsed(unitFiles);
        for (const [svc, where] of [...aws].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
          const c = AWS_SERVICES[svc];
          if (c) classes.push({ cls: c, via: where });
        }
      }
      for (const { cls: c, via } of classes) {
        add({
          kind: 'client-library',
          relationship: 'uses_client_library',
          summary: `${unit.name} uses ${c.engine} client library ${dep.name}`,
          attributes: {
            engine: c.engine,
            category: c.category,
            ecosystem: dep.ecosystem,
            package: dep.name,
            dev: dep.dev,
            ...(via ? { detected_via: via } : {}),
          },
        });
      }
    }
  }
  return out;
}
