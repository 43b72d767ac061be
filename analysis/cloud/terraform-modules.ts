/**
 * Local Terraform modules (`module "orders_table" { source = "./modules/dynamodb" }`): a resource
 * of a module directory that calls instantiate, named by an expression (`name = var.name`), is a
 * template stamped out once per call. Each call is an instance of it, named after the call and
 * cited at the call (docs/decisions.md, "Local Terraform modules"). An ECS service whose task
 * definition a call passes in from another module's task definition is one unit with it.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence, type Span } from '../shared/evidence';
import { dirname, joinPath } from '../shared/paths';
import { isRecord } from '../shared/values';
import { topLevelBlocks } from './hcl-text';

type Obj = Record<string, unknown>;

/** One `module` block whose source is a directory of the repository. */
export interface ModuleCall {
  name: string;
  file: SourceFile;
  span: Span;
  /** The called module's directory, resolved against the caller's. */
  dir: string;
  source: string;
  inputs: Obj;
}

/** The local module calls of parsed .tf files, by the directory they instantiate. */
export function localModuleCalls(
  parsed: Array<{ file: SourceFile; json: Obj }>,
): Map<string, ModuleCall[]> {
  const out = new Map<string, ModuleCall[]>();
  for (const { file, json } of parsed) {
    const modules = isRecord(json.module) ? json.module : {};
    const blocks = topLevelBlocks(file.text);
    for (const [name, bodies] of Object.entries(modules)) {
      const body = Array.isArray(bodies) ? bodies[0] : bodies;
      const source = isRecord(body) && typeof body.source === 'string' ? body.source : '';
      if (!isRecord(body) || !(source.startsWith('./') || source.startsWith('../'))) continue;
      const dir = joinPath(dirname(file.path), source.replace(/\/+$/, ''));
      if (dir === null) continue;
      const block = blocks.find((b) => b.type === 'module' && b.labels[0] === name);
      const span = block ? { start: block.start, end: block.end } : { start: 1, end: 1 };
      const list = out.get(dir) ?? [];
      list.push({ name, file, span, dir, source, inputs: body });
      out.set(dir, list);
    }
  }
  return out;
}

/** What a template resource maps to (from the catalog), as terraform.ts resolved it. */
export interface TemplateResource {
  type: string;
  address: string;
  dir: string;
  body: Obj;
  kind: string;
  engine: string | null;
  cloud: string;
  /** The resource's settings as written in the module (catalog details, security). */
  details: Obj;
  security: Obj;
}

/** `${var.x}` alone: the variable a template argument takes. */
function variableOf(v: unknown): string | null {
  return typeof v === 'string' ? (/^\$\{var\.([A-Za-z_][\w-]*)\}$/.exec(v)?.[1] ?? null) : null;
}

/** `${module.y.output}` alone: the module call an input comes from. */
function moduleOf(v: unknown): string | null {
  return typeof v === 'string'
    ? (/^\$\{module\.([A-Za-z_][\w-]*)\.[\w.[\]]+\}$/.exec(v)?.[1] ?? null)
    : null;
}

/**
 * The name a call gives a template resource whose `name` is built only from literal text and
 * module variables (`"${var.name}-${var.protocol}"`), every variable a literal input of the call
 * (`name = "trainer"`, `protocol = "grpc"`): `trainer-grpc`. Null when any part is unknown.
 */
export function instanceName(template: unknown, inputs: Obj): string | null {
  if (typeof template !== 'string' || !template.includes('${')) return null;
  let unknown = false;
  const name = template.replace(/\$\{([^}]*)\}/g, (_m, expr: string) => {
    const v = /^\s*var\.([A-Za-z_][\w-]*)\s*$/.exec(expr)?.[1];
    const value = v === undefined ? undefined : inputs[v];
    if (typeof value !== 'string' || value.includes('${') || value.trim() === '') unknown = true;
    return typeof value === 'string' ? value : '';
  });
  if (unknown || !/^[A-Za-z0-9][\w.-]*$/.test(name)) return null;
  return name;
}

/**
 * One `<kind>-declared` record per call of each template resource, subject `<kind>:<call>`. A
 * task definition whose call feeds an ECS service call's `task_definition` is recorded under
 * that service instead: the service runs it, they are one deployed unit.
 */
export function instanceEvidence(
  templates: TemplateResource[],
  calls: Map<string, ModuleCall[]>,
  typesByDir: Map<string, Set<string>>,
): Evidence[] {
  const subjectOf = new Map<string, string>();
  // Task definition call -> the ECS service call that runs it.
  for (const t of templates.filter((x) => x.type === 'aws_ecs_service')) {
    const variable = variableOf(t.body.task_definition);
    if (!variable) continue;
    for (const c of calls.get(t.dir) ?? []) {
      const from = moduleOf(c.inputs[variable]);
      const runs = from
        ? templates.some(
            (x) =>
              x.type === 'aws_ecs_task_definition' &&
              (calls.get(x.dir) ?? []).some((d) => d.name === from),
          )
        : false;
      if (from && runs) subjectOf.set(from, entityKey(t.kind, c.name));
    }
  }
  const out: Evidence[] = [];
  for (const t of templates) {
    for (const c of calls.get(t.dir) ?? []) {
      const notifies = t.type === 'aws_sns_topic' ? notifiedOnly(c, calls, typesByDir) : null;
      if (notifies) {
        out.push(
          evidence(c.file, c.span, {
            source: 'cloud',
            provider: 'terraform',
            kind: 'notification-topic',
            subject: entityKey('resource', `module.${c.name}`),
            summary: `Terraform module.${c.name} (${c.source}) declares topic ${c.name}, used only for deployment or alarm notifications (${notifies.join(', ')}): no queue of the application`,
            attributes: {
              cloud: t.cloud,
              address: `module.${c.name}.${t.address}`,
              used_by: notifies,
            },
          }),
        );
        continue;
      }
      // A deployed service whose template builds its name from the call's inputs is known by
      // that name too (an alias): the same program another deployment runs under that name.
      const named = t.kind === 'service' ? instanceName(t.body.name, c.inputs) : null;
      const own = entityKey(t.kind, c.name);
      const subject = t.type === 'aws_ecs_task_definition' ? (subjectOf.get(c.name) ?? own) : own;
      const runBy = subject === own ? '' : ` (run by ${subject})`;
      out.push(
        evidence(c.file, c.span, {
          source: 'cloud',
          provider: 'terraform',
          kind: `${t.kind}-declared`,
          subject,
          summary: `Terraform module.${c.name} (${c.source}) declares ${t.engine ? `${t.engine} ` : ''}${t.kind} ${c.name} from its ${t.address}${runBy}`,
          attributes: {
            cloud: t.cloud,
            resource_type: t.type,
            resource_name: t.address.split('.')[1] ?? t.address,
            address: `module.${c.name}.${t.address}`,
            module_dir: t.dir,
            module_call: c.name,
            name: c.name,
            name_source: 'module-instance',
            ...(named && named !== c.name ? { aliases: [named] } : {}),
            engine: t.engine,
            ...t.details,
            security: t.security,
          },
        }),
      );
    }
  }
  return out;
}

/** Resource types that deliver or watch the system (CI/CD, alarms), not part of what it runs. */
const OPERATIONS_TYPE =
  /^aws_(codedeploy|codepipeline|codebuild|codestarnotifications|cloudwatch_metric_alarm|cloudwatch_event)/;

/**
 * The calls that use a topic call's outputs, when every one instantiates a module holding only
 * delivery or alarm resources (a CodeDeploy trigger, a CodeStar notification rule): the topic
 * carries the operators' notifications. Null when the application (or nothing) uses it.
 */
function notifiedOnly(
  topic: ModuleCall,
  calls: Map<string, ModuleCall[]>,
  typesByDir: Map<string, Set<string>>,
): string[] | null {
  const ref = new RegExp(`\\bmodule\\.${topic.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
  const users = [...calls.values()]
    .flat()
    .filter((c) => c !== topic && ref.test(JSON.stringify(c.inputs)));
  if (users.length === 0) return null;
  const operations = (c: ModuleCall) => {
    const types = typesByDir.get(c.dir);
    return (
      types !== undefined && types.size > 0 && [...types].every((x) => OPERATIONS_TYPE.test(x))
    );
  };
  return users.every(operations) ? users.map((c) => `module.${c.name}`).sort() : null;
}
