/**
 * Connections named by a service id rather than an address:
 *
 * - A service registry: every unit that is a Eureka client (`spring-cloud-starter-netflix-eureka-
 *   client`) registers with, so connects to, the repository's one Eureka server unit
 *   (`spring-cloud-starter-netflix-eureka-server`). With none or several server units the
 *   registry is not known and nothing is said.
 * - Discovery by service id in code: `discoveryClient.getInstances("customers")`,
 *   `@FeignClient(name = "visits")` / `@FeignClient("visits")`, `lb://name` in code.
 * - Dapr: service invocation by app id (`InvokeMethodAsync(..., "orders", "m")`,
 *   `CreateInvokeHttpClient("orders")`, `invoker.invoke("orders", ...)`, `invoke_method("orders",
 *   ...)`, `/v1.0/invoke/orders/method/`), and the state stores and pub/sub components a unit
 *   uses by name (`SaveStateAsync("statestore", ...)`, `PublishEventAsync("pubsub", ...)`,
 *   `/v1.0/state/statestore`, `/v1.0/publish/pubsub/topic`, `[Topic("pubsub", ...)]`).
 *   Components themselves (their engine, their scopes) are read with the manifests
 *   (analysis/cloud/kubernetes.ts).
 *
 * Evidence kind `service-id-reference` (relationship `connects_to`), or `registry-client` for
 * the registry; the object is `service:<id>`, `datastore:<component>` or `queue:<component>`.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { LineIndex } from '../shared/text';
import { isTestPath, languageOf, lex, lexStyleOf } from './common';
import type { CodeModel, Unit } from './model';

const EUREKA_SERVER = /(^|:)spring-cloud-(starter-)?netflix-eureka-server$/;
const EUREKA_CLIENT = /(^|:)spring-cloud-(starter-)?netflix-eureka-client$/;

/** A service id: lower-case DNS label(s), as registries and Dapr app ids are written. */
const ID = String.raw`([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)`;
const Q = String.raw`(["'\`])`;

interface IdPattern {
  re: RegExp;
  /** Capture group of the id. */
  group: number;
  kind: 'service' | 'datastore' | 'queue';
  via: string;
}

/** Dapr's calls are read only in files that name Dapr (an SDK import, a sidecar URL). */
const DAPR_FILE = /dapr/i;

const PATTERNS: IdPattern[] = [
  // Spring Cloud discovery and declarative clients.
  {
    re: new RegExp(String.raw`\bgetInstances\(\s*${Q}${ID}\1`, 'g'),
    group: 2,
    kind: 'service',
    via: 'discovery-client',
  },
  {
    re: new RegExp(
      String.raw`@FeignClient\(\s*(?:(?:name|value|serviceId)\s*=\s*)?${Q}${ID}\1`,
      'g',
    ),
    group: 2,
    kind: 'service',
    via: 'feign-client',
  },
  {
    re: new RegExp(String.raw`${Q}lb://${ID}(?:[:/][^"'\`]*)?\1`, 'g'),
    group: 2,
    kind: 'service',
    via: 'load-balancer-uri',
  },
  // Dapr service invocation: up to two arguments (a context, an HTTP method) before the app id.
  {
    re: new RegExp(
      String.raw`\b(?:InvokeMethod(?:Async|WithContent|WithCustomContent)?|invokeMethod|CreateInvokeMethodRequest|CreateInvokeHttpClient|invoke_method|invoker\.invoke)\s*(?:<[^<>()]*>)?\(\s*(?:appId\s*:\s*)?(?:[\w.]+\s*,\s*){0,2}${Q}${ID}\1`,
      'g',
    ),
    group: 2,
    kind: 'service',
    via: 'dapr-invoke',
  },
  {
    re: new RegExp(String.raw`/v1\.0/invoke/${ID}/method/`, 'g'),
    group: 1,
    kind: 'service',
    via: 'dapr-invoke',
  },
  // Dapr service invocation over HTTP through the sidecar with the app id in a header.
  {
    re: new RegExp(
      String.raw`["'\`]?dapr-app-id["'\`]?\s*[:,=]\s*(?:new\s+[\w.]+\(\s*)?${Q}${ID}\1`,
      'gi',
    ),
    group: 2,
    kind: 'service',
    via: 'dapr-invoke',
  },
  // Dapr building blocks by component name.
  {
    re: new RegExp(
      String.raw`\b(?:(?:Save|Get|Delete|Try(?:Save|Delete))State(?:Async|Entry(?:Async)?|Bulk(?:Async)?)?|GetBulkState(?:Async)?|ExecuteStateTransaction(?:Async)?|QueryState(?:Async)?|save_state|get_state|delete_state|get_bulk_state|state\.(?:save|get|delete|getBulk|transaction))\s*(?:<[^<>()]*>)?\(\s*(?:(?:storeName|store_name)\s*[:=]\s*)?(?:ctx\s*,\s*)?${Q}${ID}\1`,
      'g',
    ),
    group: 2,
    kind: 'datastore',
    via: 'dapr-state',
  },
  {
    re: new RegExp(String.raw`/v1\.0(?:-alpha1)?/state/${ID}(?=[/"'\`?])`, 'g'),
    group: 1,
    kind: 'datastore',
    via: 'dapr-state',
  },
  {
    re: new RegExp(
      String.raw`\b(?:PublishEvent(?:Async|WithContentType)?|publish_event|pubsub\.publish|\[Topic)\s*\(\s*(?:(?:pubsubName|pubsub_name)\s*[:=]\s*)?(?:ctx\s*,\s*)?${Q}${ID}\1`,
      'g',
    ),
    group: 2,
    kind: 'queue',
    via: 'dapr-pubsub',
  },
  {
    re: new RegExp(
      String.raw`\b(?:GetConfiguration(?:Async)?|SubscribeConfiguration(?:Async)?|get_configuration|subscribe_configuration|getConfiguration|subscribeConfiguration)\s*\(\s*(?:(?:storeName|store_name)\s*[:=]\s*)?(?:ctx\s*,\s*)?${Q}${ID}\1`,
      'g',
    ),
    group: 2,
    kind: 'datastore',
    via: 'dapr-configuration',
  },
  {
    re: new RegExp(String.raw`/v1\.0(?:-alpha1)?/configuration/${ID}(?=[/"'\`?])`, 'g'),
    group: 1,
    kind: 'datastore',
    via: 'dapr-configuration',
  },
  {
    re: new RegExp(String.raw`/v1\.0(?:-alpha1)?/publish/${ID}/`, 'g'),
    group: 1,
    kind: 'queue',
    via: 'dapr-pubsub',
  },
];

function idReferences(unit: Unit, file: SourceFile): Evidence[] {
  const lang = languageOf(file.path);
  if (!lang) return [];
  if (
    !/getInstances|FeignClient|lb:\/\/|Invoke|invoke|State|state|Publish|publish|Topic|dapr-app-id|onfiguration/.test(
      file.text,
    )
  )
    return [];
  const { code } = lex(file.text, lexStyleOf(lang));
  const idx = new LineIndex(file.text);
  const out: Evidence[] = [];
  const seen = new Set<string>();
  const dapr = DAPR_FILE.test(file.text);
  for (const p of PATTERNS) {
    if (p.via.startsWith('dapr-') && !dapr) continue;
    p.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    // Comments are blanked in `code`; string contents are kept, so the ids are read from it.
    while ((m = p.re.exec(code)) !== null) {
      const id = m[p.group] ?? '';
      const object = entityKey(p.kind, id);
      if (object === unit.key) continue;
      const line = idx.lineAt(m.index);
      const k = `${line}\u0000${object}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(
        evidence(
          file,
          { start: line, end: line },
          {
            source: 'code',
            provider: `${lang}-source`,
            kind: 'service-id-reference',
            subject: unit.key,
            relationship: 'connects_to',
            object,
            summary: `${unit.name} reaches ${p.kind === 'service' ? 'service' : `${p.kind} component`} ${id} by name (${p.via})`,
            attributes: { id, via: p.via, in_test: isTestPath(file.path) },
          },
        ),
      );
    }
  }
  return out;
}

/** The unit's declared dependencies whose name matches `re`. */
export const declaredDependencies = (unit: Unit, re: RegExp) =>
  unit.manifests.flatMap((m) => m.dependencies).filter((d) => re.test(d.name));

/**
 * A client unit's `connects_to` a server unit, cited at the client's first declared dependency
 * matching `re` (its client library); null without one.
 */
export function clientOfServer(
  model: CodeModel,
  client: Unit,
  server: Unit,
  re: RegExp,
  what: { kind: string; summary: string; attributes: Record<string, unknown> },
): Evidence | null {
  const dep = declaredDependencies(client, re)[0];
  const file = dep ? model.fileByPath.get(dep.path) : undefined;
  if (!dep || !file) return null;
  return evidence(
    file,
    { start: dep.line, end: dep.endLine },
    {
      source: 'code',
      provider: dep.ecosystem,
      kind: what.kind,
      subject: client.key,
      relationship: 'connects_to',
      object: server.key,
      summary: what.summary,
      attributes: { ...what.attributes, package: dep.name, server: server.name },
    },
  );
}

/** The Eureka client -> server evidence of the repository (see the module comment). */
function registryEvidence(model: CodeModel): Evidence[] {
  const servers = model.units.filter((u) => declaredDependencies(u, EUREKA_SERVER).length > 0);
  if (servers.length !== 1) return [];
  const server = servers[0]!;
  return model.units.flatMap((unit) => {
    if (unit.key === server.key) return [];
    const found = clientOfServer(model, unit, server, EUREKA_CLIENT, {
      kind: 'registry-client',
      summary: `${unit.name} registers with the Eureka server ${server.name} (the repository's one Eureka server unit)`,
      attributes: { registry: 'eureka' },
    });
    return found ? [found] : [];
  });
}

/** service-id-reference and registry-client evidence of every unit. */
export function discoveryEvidence(model: CodeModel): Evidence[] {
  const out = registryEvidence(model);
  for (const unit of model.units) {
    for (const file of model.filesByUnit.get(unit.key) ?? []) {
      out.push(...idReferences(unit, file));
    }
  }
  return out;
}
