/**
 * Test stacks (docs/decisions.md, "A compose file that runs the tests is no deployment"): a
 * compose file named for tests (`docker-compose-tests.yml`, `docker-compose.test.yml`, its
 * `-tests.override.yml`, `compose.e2e.yaml`) is what `docker compose -f <it> up` runs to execute
 * the test suites: test-runner containers (a Dockerfile's `unittest` target, `dotnet test`) and
 * throwaway copies of the stores they need (`sql-data-test`). When the repository deploys the
 * system otherwise (a compose service or a workload declared in a file not so named), that file
 * is no deployment of it: as for a dev container's compose file (devcontainer-stacks.ts), it
 * keeps only the declarations of deployables the other deployments also declare, never its
 * edges nor entities of its own. A repository whose only deployment is a test stack keeps it.
 * Pure and deterministic.
 */
import { keyName, type Evidence } from './evidence';
import { basename } from './shared/paths';

type Ev = Evidence & { id: string };

const DECLARATIONS = new Set(['service-declared', 'workload-declared']);
const KEPT = new Set(['service-declared', 'image-reference']);
/** A compose file name's words after the `compose` stem: one of them names tests. */
const COMPOSE_NAME = /^(?:(?:docker-)?compose|docker-stack)[.-](.+)\.ya?ml$/i;
const TEST_WORDS = new Set(['test', 'tests', 'e2e', 'testing']);

/** True for a compose file named for running tests. */
export function isTestComposeFile(path: string): boolean {
  const m = COMPOSE_NAME.exec(basename(path));
  if (!m) return false;
  return m[1]!
    .toLowerCase()
    .split(/[._-]/)
    .some((w) => TEST_WORDS.has(w));
}

const inTestStack = (e: Ev) =>
  e.provider === 'docker-compose' && isTestComposeFile(e.location.path);

/** Evidence without the test stacks' own deployables, when another deployment exists. */
export function withoutTestStacks<T extends Ev>(evidence: T[]): T[] {
  if (!evidence.some(inTestStack)) return evidence;
  const deployed = new Set<string>();
  for (const e of evidence) {
    if (e.source_type !== 'cloud' || !DECLARATIONS.has(e.evidence_kind)) continue;
    if (!inTestStack(e)) deployed.add(keyName(e.subject_key));
  }
  if (deployed.size === 0) return evidence;
  return evidence.filter(
    (e) => !inTestStack(e) || (KEPT.has(e.evidence_kind) && deployed.has(keyName(e.subject_key))),
  );
}
