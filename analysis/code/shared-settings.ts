/**
 * Settings served to several applications at once (Spring Cloud Config's `application.yml`,
 * given to every client of the config server): a setting configures a library, and an
 * application that does not depend on that library does not act on it. `spring.rabbitmq.host`
 * in the shared file is no broker connection of the registry or of the dashboard that have no
 * AMQP client; `security.oauth2.resource.user-info-uri` is no call of an application without
 * OAuth2. The connection record stays, without its edge, marked with the library it lacks.
 */
import type { Evidence } from '../evidence';
import type { Unit } from './model';

/** Setting namespaces (dotted key prefixes) and the dependency names that act on them. */
const LIBRARY_OF_SETTING: [RegExp, RegExp, string][] = [
  [/^spring\.rabbitmq\./, /amqp|rabbit/, 'an AMQP client'],
  [/^spring\.kafka\./, /kafka/, 'a Kafka client'],
  [/^spring\.data\.mongodb\./, /mongo/, 'a MongoDB client'],
  [/^spring\.(data\.)?redis\./, /redis|lettuce|jedis/, 'a Redis client'],
  [
    /^spring\.datasource\./,
    /jdbc|jpa|r2dbc|mybatis|hibernate|postgres|mysql|mariadb|mssql|h2database|hsqldb|flyway|liquibase/,
    'a SQL client',
  ],
  // Libraries that resolve services by id through discovery (Zuul, Gateway, Feign, Ribbon).
  [
    /^eureka\.client\./,
    /eureka|zuul|gateway|feign|ribbon|loadbalancer|discovery/,
    'a Eureka client',
  ],
  [/^(spring\.)?security\.oauth2\./, /oauth2|security|keycloak|okta/, 'an OAuth2 client'],
];

/** The dotted key path in effect at each line of a YAML or properties file (index = line - 1). */
export function keyPathsByLine(text: string, yaml: boolean): string[] {
  const out: string[] = [];
  const parents: { indent: number; key: string }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!yaml) {
      const kv = /^\s*([\w.\-[\]]+)\s*[=:]/.exec(line);
      out.push(kv ? (kv[1] ?? '') : '');
      continue;
    }
    const kv = /^(\s*)(?:-\s+)?["']?([\w.\-[\]]+)["']?\s*:(?=\s|$)/.exec(line);
    if (!kv) {
      out.push(parents.map((p) => p.key).join('.'));
      continue;
    }
    const indent = kv[1]?.length ?? 0;
    while (parents.length && parents[parents.length - 1]!.indent >= indent) parents.pop();
    parents.push({ indent, key: kv[2] ?? '' });
    out.push(parents.map((p) => p.key).join('.'));
  }
  return out;
}

/**
 * The connection records of a shared settings file that `unit` does not act on, made edgeless:
 * the setting's namespace names a library the unit does not depend on.
 */
export function withoutUnusedSettings(unit: Unit, records: Evidence[], text: string): Evidence[] {
  const deps = unit.manifests.flatMap((m) => m.dependencies).map((d) => d.name.toLowerCase());
  let paths: string[] | null = null;
  return records.map((e) => {
    if (e.object_key === null) return e;
    paths ??= keyPathsByLine(text, /\.ya?ml$/i.test(e.location.path));
    const path = `${(paths[e.location.start_line - 1] ?? '').toLowerCase()}.`;
    const hit = LIBRARY_OF_SETTING.find(([ns]) => ns.test(path));
    if (!hit || deps.some((d) => hit[1].test(d))) return e;
    return {
      ...e,
      relationship_kind: null,
      object_key: null,
      summary: `${e.summary}, in settings served to several applications; ${unit.name} has no ${hit[2].replace(/^an? /, '')} library, so it does not use them`,
      attributes: { ...e.attributes, unused_shared_setting: hit[2] },
    };
  });
}
