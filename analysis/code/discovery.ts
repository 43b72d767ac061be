/**
 * Connections named by a service id rather than an address:
 *
 * - A service registry: every unit that is a Eureka client (`spring-cloud-starter-netflix-eureka-
 *   client`) registers with, so connects to, the repository's one Eureka server unit
 *   (`spring-cloud-starter-netflix-eureka-server`). With none or several server units the
 *   registry is not known and nothing is said.
 * - Discovery by service id in code: `discoveryClient.getInstances("customers")`,
 *   `@FeignClient(name = "visits")` / `@FeignClient("visits")`, Micronaut's `@Client(id = "visits")`
 *   / `@Client("visits")`, `lb://name` in code.
 * - Spring Cloud's client-side load balancer by service id: `loadBalancer.choose("CATALOG")` and
 *   `loadBalancer.execute("catalog", request)` on a receiver the file declares as a
 *   `LoadBalancerClient` (Ribbon's `RibbonLoadBalancerClient`, `BlockingLoadBalancerClient`).
 *   Registries look service ids up case-insensitively (Eureka upper-cases its application names,
 *   Consul's per-service queries ignore case), so `CATALOG` is the service registered as
 *   `catalog`; the id is lower-cased like every entity name.
 * - Dapr: service invocation by app id (`InvokeMethodAsync(..., "orders", "m")`,
 *   `CreateInvokeHttpClient("orders")`, `invoker.invoke("orders", ...)`, `invoke_method("orders",
 *   ...)`, `/v1.0/invoke/orders/method/`), and the state stores and pub/sub components a unit
 *   uses by name (`SaveStateAsync("statestore", ...)`, `PublishEventAsync("pubsub", ...)`,
 *   `/v1.0/state/statestore`, `/v1.0/publish/pubsub/topic`, `[Topic("pubsub", ...)]`, the Go SDK's
 *   `&common.Subscription{PubsubName: "pubsub", ...}` and `SaveState(r.Context(), "statestore",
 *   ...)` with any context expression first).
 *   Components themselves (their engine, their scopes) are read with the manifests
 *   (analysis/cloud/kubernetes.ts). The app id or component name may be a string constant the
 *   file declares (`InvokeMethodAsync(HttpMethod.Get, OrderServiceAppId, "orders")`,
 *   `[Topic(PUBSUB_NAME, "topic")]`): the constant's value is read; a constant before a literal
 *   is the id, never the literal method name after it.
 *
 * Evidence kind `service-id-reference` (relationship `connects_to`), or `registry-client` for
 * the registry; the object is `service:<id>`, `datastore:<component>` or `queue:<component>`.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { LineIndex } from '../shared/text';
import { isTestPath, languageOf, lex, lexStyleOf } from './common';
import { daprHeaderEnvReferences, idReferenceEvidence } from './dapr-header-env';
import { stringConstants } from './string-constants';
import type { CodeModel, Unit } from './model';

const EUREKA_SERVER = /(^|:)spring-cloud-(starter-)?netflix-eureka-server$/;
const EUREKA_CLIENT = /(^|:)spring-cloud-(starter-)?netflix-eureka-client$/;

/** A service id: lower-case DNS label(s), as registries and Dapr app ids are written. */
const ID = String.raw`([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)`;
const Q = String.raw`(["'\`])`;

interface IdPattern {
  re: RegExp;
  /** Capture group of the id (patterns read with `ARG` name it `id` or `cname`). */
  group: number;
  kind: 'service' | 'datastore' | 'queue';
  via: string;
  /** The source with `ARG` where the id is an argument: a literal, or a constant of the file. */
  template?: { source: string; flags: string };
}

const ARG_MARK = '<ARG>';

/**
 * The argument holding an id: a quoted literal, or (`names`: the file's string constants) a
 * constant's name, its value read from the declaration (analysis/code/string-constants.ts).
 */
function argSource(names: string[]): string {
  const literal = String.raw`(?<q>["'\`])(?<id>${ID})\k<q>`;
  if (names.length === 0) return `(?:${literal})`;
  return String.raw`(?:${literal}|(?<cname>${names.join('|')})(?![\w.(]))`;
}

/** A pattern whose id is read from an argument (`ARG` in `source`). */
function argPattern(
  source: string,
  flags: string,
  kind: IdPattern['kind'],
  via: string,
): IdPattern {
  return {
    re: new RegExp(source.replace(ARG_MARK, argSource([])), flags),
    group: 0,
    kind,
    via,
    template: { source, flags },
  };
}

/**
 * Arguments an SDK takes before the app id: a context (Go's `ctx`, `context.Background()`) or an
 * HTTP method (.NET's `HttpMethod.Get`). Any other argument there may itself be the app id (a
 * variable), so a literal after it is the method name, not the id.
 */
const SKIPPED = String.raw`(?:[\w.]*[Cc]tx|context|[\w.]*\.(?:Context|Background|TODO)\(\)|(?:[\w.]*\.)?HttpMethod\.\w+|http\.Method\w+|httpMethod|method|verb)`;

/** A Go context argument before a component name (`ctx`, `r.Context()`, `context.Background()`). */
const CONTEXT = String.raw`(?:[\w.]*[Cc]tx|context|[\w.]*\.(?:Context|Background|TODO)\(\))`;

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
  // Micronaut declarative clients by service id: `@Client(id = "pricing")`, `@Client("pricing")`
  // (a value that is a bare id, not a URL, a path or a `${...}` placeholder).
  {
    re: new RegExp(String.raw`@Client\(\s*(?:(?:id|value)\s*=\s*)?${Q}${ID}\1`, 'g'),
    group: 2,
    kind: 'service',
    via: 'micronaut-client',
  },
  {
    re: new RegExp(String.raw`${Q}lb://${ID}(?:[:/][^"'\`]*)?\1`, 'g'),
    group: 2,
    kind: 'service',
    via: 'load-balancer-uri',
  },
  // Dapr service invocation: up to two arguments (a context, an HTTP method) before the app id.
  // The first argument that is a literal or a constant of the file is the app id, so a
  // constant app id before a literal method name is the id (the skip is lazy).
  argPattern(
    String.raw`\b(?:InvokeMethod(?:Async|WithContent|WithCustomContent)?|invokeMethod|CreateInvokeMethodRequest|CreateInvokeHttpClient|invoke_method|invoker\.invoke)\s*(?:<[^<>()]*>)?\(\s*(?:appId\s*:\s*)?(?:${SKIPPED}\s*,\s*){0,2}?${ARG_MARK}`,
    'g',
    'service',
    'dapr-invoke',
  ),
  {
    re: new RegExp(String.raw`/v1\.0/invoke/${ID}/method/`, 'g'),
    group: 1,
    kind: 'service',
    via: 'dapr-invoke',
  },
  // Dapr service invocation over HTTP through the sidecar with the app id in a header.
  argPattern(
    String.raw`["'\`]?dapr-app-id["'\`]?\s*[:,=]\s*(?:new\s+[\w.]+\(\s*)?${ARG_MARK}`,
    'gi',
    'service',
    'dapr-invoke',
  ),
  // Dapr building blocks by component name.
  argPattern(
    String.raw`\b(?:(?:Save|Get|Delete|Try(?:Save|Delete))State(?:Async|Entry(?:Async)?|Bulk(?:Async)?)?|GetBulkState(?:Async)?|ExecuteStateTransaction(?:Async)?|QueryState(?:Async)?|save_state|get_state|delete_state|get_bulk_state|state\.(?:save|get|delete|getBulk|transaction))\s*(?:<[^<>()]*>)?\(\s*(?:(?:storeName|store_name)\s*[:=]\s*)?(?:${CONTEXT}\s*,\s*)?${ARG_MARK}`,
    'g',
    'datastore',
    'dapr-state',
  ),
  {
    re: new RegExp(String.raw`/v1\.0(?:-alpha1)?/state/${ID}(?=[/"'\`?])`, 'g'),
    group: 1,
    kind: 'datastore',
    via: 'dapr-state',
  },
  argPattern(
    String.raw`(?:\b(?:PublishEvent(?:Async|WithContentType)?|publish_event|pubsub\.publish)|\[Topic)\s*\(\s*(?:(?:pubsubName|pubsub_name)\s*[:=]\s*)?(?:${CONTEXT}\s*,\s*)?${ARG_MARK}`,
    'g',
    'queue',
    'dapr-pubsub',
  ),
  // Go SDK subscription: `&common.Subscription{PubsubName: "pubsub", Topic: ...}`.
  argPattern(
    String.raw`\bSubscription\s*\{[^{}]*?\bPubsubName\s*:\s*${ARG_MARK}`,
    'g',
    'queue',
    'dapr-pubsub',
  ),
  argPattern(
    String.raw`\b(?:GetConfiguration(?:Async)?|SubscribeConfiguration(?:Async)?|get_configuration|subscribe_configuration|getConfiguration|subscribeConfiguration)\s*\(\s*(?:(?:storeName|store_name)\s*[:=]\s*)?(?:ctx\s*,\s*)?${ARG_MARK}`,
    'g',
    'datastore',
    'dapr-configuration',
  ),
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

/** A service id as callers write it to a registry: any case (`CATALOG`), lower-cased after. */
const ANY_CASE_ID = String.raw`([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)`;

/**
 * `x.choose("id")` / `x.execute("id", ...)` where the file declares `x` as a Spring Cloud
 * `LoadBalancerClient` (a field, a parameter or a local of that type): the pattern, or null when
 * the file declares none.
 */
function loadBalancerPattern(code: string): IdPattern | null {
  const receivers = new Set<string>();
  for (const m of code.matchAll(/\b\w{0,40}LoadBalancerClient\s+([A-Za-z_]\w{0,80})\s*[;,)=]/g)) {
    receivers.add(m[1] ?? '');
    // A handful of declarations per file; more is no program we read (and keeps the regex small).
    if (receivers.size >= 16) break;
  }
  if (receivers.size === 0) return null;
  const names = [...receivers].sort((a, b) => b.length - a.length).join('|');
  return {
    re: new RegExp(
      String.raw`(?<![\w.])(?:this\s*\.\s*)?(?:${names})\s*\.\s*(?:choose|execute)\s*\(\s*${Q}${ANY_CASE_ID}\1`,
      'g',
    ),
    group: 2,
    kind: 'service',
    via: 'load-balancer-client',
  };
}

function idReferences(unit: Unit, file: SourceFile): Evidence[] {
  const lang = languageOf(file.path);
  if (!lang) return [];
  if (
    !/getInstances|FeignClient|@Client|lb:\/\/|LoadBalancerClient|Invoke|invoke|State|state|Publish|publish|Topic|PubsubName|dapr-app-id|onfiguration/.test(
      file.text,
    )
  )
    return [];
  const { code } = lex(file.text, lexStyleOf(lang));
  const idx = new LineIndex(file.text);
  const out: Evidence[] = [];
  const seen = new Set<string>();
  const dapr = DAPR_FILE.test(file.text);
  // The file's string constants whose value is an id: an argument may name one.
  const constants = new Map(
    [...stringConstants(code)].filter(([, v]) => new RegExp(`^${ID}$`).test(v)),
  );
  const names = [...constants.keys()].sort((a, b) => b.length - a.length);
  const balancer = /LoadBalancerClient/.test(file.text) ? loadBalancerPattern(code) : null;
  for (const p of balancer ? [...PATTERNS, balancer] : PATTERNS) {
    if (p.via.startsWith('dapr-') && !dapr) continue;
    const re =
      p.template && names.length > 0
        ? new RegExp(p.template.source.replace(ARG_MARK, argSource(names)), p.template.flags)
        : p.re;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    // Comments are blanked in `code`; string contents are kept, so the ids are read from it.
    while ((m = re.exec(code)) !== null) {
      const named = m.groups?.cname;
      const id = p.template
        ? (m.groups?.id ?? (named === undefined ? undefined : constants.get(named)) ?? '')
        : (m[p.group] ?? '');
      if (id === '') continue;
      const object = entityKey(p.kind, id.toLowerCase());
      if (object === unit.key) continue;
      const line = idx.lineAt(m.index);
      const k = `${line}\u0000${object}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(
        idReferenceEvidence(
          unit,
          file,
          lang,
          line,
          object,
          `${unit.name} reaches ${p.kind === 'service' ? 'service' : `${p.kind} component`} ${id} by name (${p.via}${named ? `, constant ${named}` : ''})`,
          {
            id,
            via: p.via,
            in_test: isTestPath(file.path),
            ...(named ? { constant: named } : {}),
          },
        ),
      );
    }
  }
  // The `dapr-app-id` header set from an env-read variable with a default (dapr-header-env.ts).
  if (dapr) out.push(...daprHeaderEnvReferences(unit, file, lang, code, idx));
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
