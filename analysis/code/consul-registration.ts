/**
 * Which Consul a Spring Cloud Consul application registers in (issue 23, session 15).
 *
 * A unit that declares `spring-cloud-starter-consul-discovery` (or `spring-cloud-consul-
 * discovery`) registers itself in the Consul agent at `spring.cloud.consul.host` (Spring Cloud
 * Consul's default: `localhost`) when it starts, under its `spring.application.name`, unless its
 * own Spring files switch it off (`spring.cloud.consul.enabled`,
 * `spring.cloud.consul.discovery.enabled` or `spring.cloud.consul.discovery.register` false).
 * Evidence `registry-register` (no relationship: the link to the agent is read elsewhere, from the
 * deployment), attributes `registry: 'consul'` and `registry_host` (lower case, a `${VAR:default}`
 * placeholder read as its default). analysis/reconcile-registry-catalog.ts joins it with the
 * Consul Template files that render a proxy for every service of the same Consul.
 */
import type { Evidence } from '../evidence';
import { evidence } from '../shared/evidence';
import { declaredDependencies } from './discovery';
import type { CodeModel } from './model';
import { ownSpringFiles, plainName, springSetting } from './spring-cloud';

const CONSUL_DISCOVERY = /(^|:)spring-cloud-(starter-)?consul-discovery$/;
const OFF_KEYS = [
  'spring.cloud.consul.enabled',
  'spring.cloud.consul.discovery.enabled',
  'spring.cloud.consul.discovery.register',
];

/** The registry-register records of the Spring Cloud Consul units of the repository. */
export function consulRegistrationEvidence(model: CodeModel): Evidence[] {
  const out: Evidence[] = [];
  for (const unit of model.units) {
    const dep = declaredDependencies(unit, CONSUL_DISCOVERY).find((d) => !d.dev);
    if (!dep) continue;
    const files = ownSpringFiles(model.filesByUnit.get(unit.key) ?? []);
    // The default profile's files only: a profile's file (`application-test.yml`) may be unused.
    const defaults = files.filter((f) =>
      /^(application|bootstrap)\.\w+$/i.test(f.path.split('/').pop() ?? ''),
    );
    const off = defaults.some((f) =>
      OFF_KEYS.some((k) => springSetting(f, k)?.value.trim().toLowerCase() === 'false'),
    );
    if (off) continue;
    let host: { value: string; file: (typeof files)[number]; line: number } | null = null;
    for (const f of defaults) {
      const s = springSetting(f, 'spring.cloud.consul.host');
      if (s) {
        host = { value: s.value, file: f, line: s.line };
        break;
      }
    }
    const name = host ? plainName(host.value) : 'localhost';
    if (name === null) continue;
    const at = host ?? { file: model.fileByPath.get(dep.path), line: dep.line };
    if (!at.file) continue;
    out.push(
      evidence(
        at.file,
        { start: at.line, end: host ? host.line : dep.endLine },
        {
          source: 'code',
          provider: 'spring-cloud-consul',
          kind: 'registry-register',
          subject: unit.key,
          summary: `${unit.name} registers itself in the Consul agent at ${name} (spring-cloud-consul-discovery${host ? ', spring.cloud.consul.host' : ', default host'})`,
          attributes: { registry: 'consul', registry_host: name, package: dep.name },
        },
      ),
    );
  }
  return out;
}
