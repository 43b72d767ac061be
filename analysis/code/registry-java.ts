/**
 * Calls through a service registry of the code's own, named by an enum (Java servlet services).
 *
 * - Registration: a servlet unit registers itself with a registry client under its context path
 *   (`RegistryClient.getClient().register(event.getServletContext().getContextPath())`). A WAR
 *   deployed on a servlet container is served under its file name, which Maven takes from the
 *   POM's `<finalName>` (else `<artifactId>`): that name is registered. Evidence
 *   `registry-register`, the name in `aliases` (another name of the unit's deployment).
 * - Named services: an enum whose constants carry a registered name
 *   (`PERSISTENCE("acme.persistence")`): `Service.PERSISTENCE` stands for that name.
 * - Lookup: such a constant as the first argument of a call addressed to a load balancer or
 *   registry client (`ServiceLoadBalancer.loadBalanceRESTOperation(Service.PERSISTENCE, ...)`,
 *   `LoadBalancedCRUDOperations.getEntities(Service.PERSISTENCE, ...)`, `registry.lookup(...)`):
 *   evidence `registry-lookup` (relationship `connects_to`, object `service:<name>`).
 *   - In the code of a unit that registers itself: that unit's call (its own name excepted: a
 *     call to its own replicas).
 *   - In a library (a unit that registers nothing): credited per function. A lookup inside a
 *     `static` method `m` of class `C` counts for the units whose own non-test code calls `C.m(`;
 *     any other lookup of the library counts for nobody (a shared client library used by every
 *     unit does not make every unit call every service).
 *
 * Names are read only from literal strings; test code registers and looks up nothing.
 */
import type { Evidence, SourceFile } from '../evidence';
import { entityKey } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { CODE, isTestPath, languageOf, lex, lexStyleOf } from './common';
import type { CodeModel, Unit } from './model';

/** `register...(` with the servlet context path as its argument. */
const REGISTER_CONTEXT = /\.\s*register\w*\s*\(\s*[^;]*?getContextPath\s*\(\s*\)/;
/** A registry client or load balancer named in a callee chain. */
const REGISTRY_CALLEE = /load\s*balanc|registry|discovery/i;
/** A registered name: DNS labels, dots allowed (`acme.persistence`). */
const NAME = /^(?=[a-z0-9.-]*[a-z])[a-z0-9](?:[a-z0-9.-]{0,200}[a-z0-9])?$/;

interface JavaFile {
  file: SourceFile;
  unit: Unit;
  code: string;
  mask: Uint8Array;
}

function javaFiles(model: CodeModel): JavaFile[] {
  const out: JavaFile[] = [];
  for (const unit of model.units)
    for (const file of model.filesByUnit.get(unit.key) ?? []) {
      if (languageOf(file.path) !== 'java' || isTestPath(file.path)) continue;
      const { code, mask } = lex(file.text, lexStyleOf('java'));
      out.push({ file, unit, code, mask });
    }
  return out;
}

/** The WAR name of a Maven unit: `<finalName>`, else the project's `<artifactId>`. */
function warName(model: CodeModel, unit: Unit): string | null {
  const pom = unit.manifests.find((m) => m.ecosystem === 'maven');
  const text = pom ? model.files.find((f) => f.path === pom.path)?.text : undefined;
  if (!text) return null;
  const body = text.replace(/<!--[\s\S]*?-->/g, '').replace(/<parent>[\s\S]*?<\/parent>/, '');
  const m =
    /<finalName>\s*([^<\s]+)\s*<\/finalName>/.exec(body) ??
    /<artifactId>\s*([^<\s]+)\s*<\/artifactId>/.exec(body);
  const name = m?.[1] ?? '';
  return NAME.test(name) ? name : null;
}

/** `Enum.CONST` -> the name it carries, for enums whose constants carry registered names. */
function namedConstants(files: JavaFile[], names: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    const e = /\benum\s+([A-Z]\w*)\s*(?:implements\s[^{]*)?\{/.exec(f.code);
    if (!e) continue;
    const body = f.code.slice(e.index + e[0].length, f.code.indexOf(';', e.index));
    const re = /\b([A-Z][A-Z0-9_]*)\s*\(\s*"([^"\n]*)"/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(body)) !== null)
      if (names.has(m[2] ?? '')) out.set(`${e[1]}.${m[1]}`, m[2] ?? '');
  }
  return out;
}

/** The `static` method whose body holds `index` (a member of the file's top-level class), or null. */
function enclosingStaticMethod(f: JavaFile, index: number): string | null {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < index; i++) {
    if (f.mask[i] !== CODE) continue;
    const ch = f.code[i];
    if (ch === '{') {
      depth++;
      if (depth === 2) open = i;
    } else if (ch === '}') depth--;
  }
  if (depth < 2 || open < 0) return null;
  const head = f.code.slice(Math.max(0, open - 400), open);
  const m =
    /(?:^|[;}\s])((?:(?:public|protected|private|static|final|synchronized)\s+)+)[\w<>[\],.?\s]+?\s(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:throws\s+[\w.,\s]+)?$/.exec(
      head,
    );
  if (!m || !/\bstatic\b/.test(m[1] ?? '')) return null;
  return m[2] ?? null;
}

interface Lookup {
  f: JavaFile;
  name: string;
  index: number;
}

function lookups(files: JavaFile[], constants: Map<string, string>): Lookup[] {
  if (constants.size === 0) return [];
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const use = new RegExp(
    String.raw`([\w.()\s]{0,160})\(\s*(${[...constants.keys()]
      .map(escape)
      .join('|')
      .replace(/\\\./g, String.raw`\s*\.\s*`)})\s*[,)]`,
    'g',
  );
  const out: Lookup[] = [];
  for (const f of files) {
    use.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = use.exec(f.code)) !== null) {
      const at = m.index + (m[1] ?? '').length;
      if (f.mask[at] !== CODE || !REGISTRY_CALLEE.test(m[1] ?? '')) continue;
      const name = constants.get((m[2] ?? '').replace(/\s+/g, ''));
      if (name) out.push({ f, name, index: at });
      use.lastIndex = at + 1;
    }
  }
  return out;
}

/** registry-register and registry-lookup evidence of Java services named by an enum. */
export function javaRegistryEvidence(model: CodeModel): Evidence[] {
  const files = javaFiles(model);
  const registered = new Map<string, string>();
  const out: Evidence[] = [];
  for (const f of files) {
    if (registered.has(f.unit.key)) continue;
    const m = REGISTER_CONTEXT.exec(f.code);
    if (!m || !/registry|discovery/i.test(f.code)) continue;
    const name = warName(model, f.unit);
    if (name === null) continue;
    registered.set(f.unit.key, name);
    const line = new LineIndex(f.file.text).lineAt(m.index);
    out.push(
      evidence(
        f.file,
        { start: line, end: line },
        {
          source: 'code',
          provider: 'registry',
          kind: 'registry-register',
          subject: f.unit.key,
          summary: `${f.unit.name} registers itself in the service registry as ${name} (its WAR's context path)`,
          attributes: { name, aliases: [name] },
        },
      ),
    );
  }
  if (registered.size === 0) return out;
  const found = lookups(files, namedConstants(files, new Set(registered.values())));
  const seen = new Set<string>();
  const push = (unit: Unit, file: SourceFile, index: number, name: string, via?: string) => {
    if (registered.get(unit.key) === name || seen.has(`${unit.key}\u0000${name}`)) return;
    seen.add(`${unit.key}\u0000${name}`);
    const line = new LineIndex(file.text).lineAt(index);
    out.push(
      evidence(
        file,
        { start: line, end: line },
        {
          source: 'code',
          provider: 'java-source',
          kind: 'registry-lookup',
          subject: unit.key,
          relationship: 'connects_to',
          object: entityKey('service', name),
          summary: via
            ? `${unit.name} calls ${via}, which resolves ${name} through the service registry`
            : `${unit.name} resolves ${name} through the service registry`,
          attributes: { name, via: 'registry', in_test: false, ...(via ? { function: via } : {}) },
        },
      ),
    );
  };
  const library: { fn: string; name: string; unit: Unit }[] = [];
  for (const l of found) {
    if (registered.has(l.f.unit.key)) push(l.f.unit, l.f.file, l.index, l.name);
    else {
      const method = enclosingStaticMethod(l.f, l.index);
      const cls = basename(l.f.file.path).replace(/\.java$/, '');
      if (method) library.push({ fn: `${cls}.${method}`, name: l.name, unit: l.f.unit });
    }
  }
  for (const { fn, name, unit } of library) {
    const call = new RegExp(String.raw`\b${fn.replace('.', String.raw`\s*\.\s*`)}\s*\(`);
    for (const f of files) {
      if (f.unit.key === unit.key || !registered.has(f.unit.key)) continue;
      const m = call.exec(f.code);
      if (m && f.mask[m.index] === CODE) push(f.unit, f.file, m.index, name, fn);
    }
  }
  return out;
}
