/**
 * Calls through a service registry by name (Consul, etcd, a registry client of the code's own).
 *
 * - Registration: a registry client's register call with the service's name as its first
 *   argument, a string or a constant/variable of the same file (`s.Registry.Register(name, id,
 *   ip, port)` with `const name = "srv-orders"`, `consulRegistry.register("orders")`). Evidence
 *   `registry-register`, subject the unit, the name in `aliases`: the registered name is another
 *   name of whatever deployment runs that code.
 * - Resolution: a call argument that is exactly a name registered elsewhere in the repository
 *   (`initOrdersClient("srv-orders")`), in a file that dials through a registry or resolver
 *   (`Dial(`, `consul://`, `etcd://`, a resolver). A registry of metrics, schemas, types or
 *   handlers (`metricRegistry.register("requests", ...)`) registers no service. Evidence `registry-lookup`
 *   (relationship `connects_to`, object `service:<name>`).
 *
 * - Kratos (issue 23, session 13): `kratos.New(kratos.Name(Name))` registers the application
 *   under `Name` (a literal or a variable of the file, `Name = "beer.user.service"`; dotted names
 *   are accepted there), and a client resolves it as `discovery:///beer.user.service`
 *   (`grpc.WithEndpoint(...)` with a registry discovery).
 *
 * Names are read only from literal strings; a name built at run time says nothing.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence } from '../shared/evidence';
import { dirname } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { isTestPath, languageOf, lex, lexStyleOf } from './common';
import type { CodeModel, Unit } from './model';

/** A service name as registries hold them: a lower-case DNS label, with a letter. */
const NAME = /^(?=[a-z0-9-]*[a-z])[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** `<registry-ish receiver>.register...(<first argument>` */
const REGISTER =
  /\b(\w*(?:registry|consul|discovery|registrar|naming)\w*)\s*(?:\(\s*\))?\s*\.\s*(?:register|registerservice|serviceregister|registerinstance)\s*\(\s*(?:ctx\s*,\s*)?("[^"\n]*"|'[^'\n]*'|[A-Za-z_][\w.]*)/gi;
/** `kratos.Name(<name>)`: the name a Kratos application registers under. */
const KRATOS_NAME = /\bkratos\s*\.\s*Name\s*\(\s*("[^"\n]*"|`[^`\n]*`|[A-Za-z_][\w.]*)\s*\)/g;
/** A dotted service name (`beer.user.service`): DNS labels joined by dots. */
const DOTTED =
  /^(?=[a-z0-9.-]*[a-z])[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
/** Registries of something else than services: metrics, schemas, types, handlers, plugins. */
const OTHER_REGISTRY =
  /metric|meter|prometheus|collector|schema|type|codec|convert|handler|plugin|command|component|route|event|health|template/i;
/** A file that resolves services through a registry: a dial, a registry URI, a resolver. */
const DIALS = /\bDial\w*\s*\(|\b(?:consul|etcd|nacos|zk|zookeeper|discovery):\/\/|\bresolver\b/;

interface Registration {
  name: string;
  unit: Unit;
  file: SourceFile;
  line: number;
}

/** The string value a constant or variable of the file is given (`const name = "x"`, `name := "x"`). */
function constantValue(text: string, ident: string): string | null {
  const id = ident.split('.').pop() ?? ident;
  const re = new RegExp(
    String.raw`\b${id}\s*(?::=|=|:\s*string\s*=|\s+string\s*=)\s*(["'\`])([^"'\`\n]*)\1`,
    'g',
  );
  const values = new Set<string>();
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) values.add(m[2] ?? '');
  return values.size === 1 ? [...values][0]! : null;
}

/** The unit's source files whose raw text passes `keep`, lexed (comments blanked). */
function codeFiles(model: CodeModel, unit: Unit, keep: (text: string) => boolean) {
  return (model.filesByUnit.get(unit.key) ?? []).flatMap((file) => {
    const lang = languageOf(file.path);
    if (!lang || isTestPath(file.path) || !keep(file.text)) return [];
    return [{ file, lang, code: lex(file.text, lexStyleOf(lang)).code }];
  });
}

function registrations(model: CodeModel): Registration[] {
  const out: Registration[] = [];
  for (const unit of model.units) {
    for (const { file, code } of codeFiles(model, unit, (t) => /register|kratos/i.test(t))) {
      const idx = new LineIndex(file.text);
      REGISTER.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = REGISTER.exec(code)) !== null) {
        if (OTHER_REGISTRY.test(m[1] ?? '')) continue;
        const arg = m[2] ?? '';
        const name = /^["']/.test(arg) ? arg.slice(1, -1) : constantValue(code, arg);
        if (name === null || !NAME.test(name)) continue;
        out.push({ name, unit, file, line: idx.lineAt(m.index + m[0].length - arg.length) });
      }
      KRATOS_NAME.lastIndex = 0;
      while ((m = KRATOS_NAME.exec(code)) !== null) {
        const arg = m[1] ?? '';
        const name = /^["`]/.test(arg) ? arg.slice(1, -1) : constantValue(code, arg);
        if (name === null || !(NAME.test(name) || DOTTED.test(name))) continue;
        out.push({ name, unit, file, line: idx.lineAt(m.index) });
      }
    }
  }
  return out;
}

/** registry-register and registry-lookup evidence of the repository. */
export function registryNameEvidence(model: CodeModel): Evidence[] {
  const regs = registrations(model);
  if (regs.length === 0) return [];
  const out: Evidence[] = [];
  const names = new Map<string, Registration[]>();
  for (const r of regs) {
    names.set(r.name, [...(names.get(r.name) ?? []), r]);
    out.push(
      evidence(
        r.file,
        { start: r.line, end: r.line },
        {
          source: 'code',
          provider: 'registry',
          kind: 'registry-register',
          subject: r.unit.key,
          summary: `${r.unit.name} registers itself in the service registry as ${r.name}`,
          attributes: { name: r.name, aliases: [r.name] },
        },
      ),
    );
  }
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const use = new RegExp(
    String.raw`[(,]\s*(["'\`])(?:discovery:///)?(${[...names.keys()].map(escape).join('|')})\1\s*[,)]`,
    'g',
  );
  for (const unit of model.units) {
    const mayDial = (t: string) => DIALS.test(t) && [...names.keys()].some((n) => t.includes(n));
    for (const { file, lang, code } of codeFiles(model, unit, mayDial)) {
      if (!DIALS.test(code)) continue;
      const own = new Set(
        regs.filter((r) => dirname(r.file.path) === dirname(file.path)).map((r) => r.name),
      );
      const idx = new LineIndex(file.text);
      const seen = new Set<string>();
      use.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = use.exec(code)) !== null) {
        const name = m[2] ?? '';
        if (own.has(name) || seen.has(name)) continue;
        seen.add(name);
        const line = idx.lineAt(m.index);
        out.push(
          evidence(
            file,
            { start: line, end: line },
            {
              source: 'code',
              provider: `${lang}-source`,
              kind: 'registry-lookup',
              subject: unit.key,
              relationship: 'connects_to',
              object: entityKey('service', name),
              summary: `${unit.name} resolves ${name} through the service registry`,
              attributes: { name, via: 'registry', in_test: false },
            },
          ),
        );
      }
    }
  }
  return out;
}
