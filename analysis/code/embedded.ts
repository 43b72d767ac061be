/**
 * Embedded stores (docs/decisions.md, "Embedded stores"): a database the unit opens inside its
 * own process or from a file (SQLite, LiteDB, H2, HSQLDB, Derby, DuckDB, an in-memory EF Core
 * provider) is a datastore of that unit, `embedded: true`, never a shared service: its key is
 * the unit's (`datastore:<unit>-<engine>`), so two units opening `app.db` never share one.
 *
 * Read from the unit's code and application settings (tests excluded):
 * `UseSqlite(` / `Data Source=x.db` (with an SQLite provider) / `Filename=x.db`,
 * `new LiteDatabase(`, `jdbc:h2:` / `jdbc:sqlite:` / `jdbc:hsqldb:` / `jdbc:derby:`,
 * `sqlite:///x.db` (SQLAlchemy, any driver suffix), `django.db.backends.sqlite3`,
 * `sqlite3.connect(`, `duckdb.connect(`, `sql.Open("sqlite3", ...)`, `sqlite.Open(` (GORM),
 * `new sqlite3.Database(`, `UseInMemoryDatabase(`.
 *
 * An embedded SQL store in a unit that also has a client of a SQL server (a MySQL or PostgreSQL
 * driver, or a .NET SQL Server / Oracle provider: `Microsoft.EntityFrameworkCore.SqlServer`) is that unit's fallback or development store (`if type == "mysql" { ... } else {
 * sqlite in memory }`): it stays evidence (`embedded-store-alternative`), no datastore, no edge.
 *
 * A Python module that imports the engine only under `try: import duckdb / except ImportError:`
 * is an optional integration (a connector enabled when its driver is installed, opening the
 * file its user configures): it stays evidence (`embedded-store-optional`), no datastore.
 *
 * A JVM unit that declares the engine's driver only in test scope (Maven `<scope>test</scope>`,
 * Gradle `testImplementation`) cannot open the store in the program it builds (a test-scoped
 * artifact is not packaged): it stays evidence (`embedded-store-test-driver`), no datastore.
 */
import { entityKey, type Evidence, type SourceFile } from '../evidence';
import { evidence } from '../shared/evidence';
import { basename } from '../shared/paths';
import { LineIndex } from '../shared/text';
import { classifyClient } from './clients';
import { isTestPath, languageOf } from './common';
import { isGoTestSupport } from './go-test-support';
import type { CodeModel, Unit } from './model';

const MAX_CHARS = 1_000_000;
const CONFIG = /\.(ya?ml|json|properties|toml|ini|cfg|conf|env)$|^\.env/i;

interface Form {
  re: RegExp;
  engine: string;
  /** Only in a unit whose manifests or code show this engine (an ADO `Data Source=` is generic). */
  needs?: RegExp;
}

const FORMS: Form[] = [
  { re: /\bUseSqlite\s*\(/g, engine: 'sqlite' },
  {
    re: /\b(?:Data Source|DataSource|Filename)\s*=\s*[^;"'\n]*\.(?:db|sqlite|sqlite3)\b/gi,
    engine: 'sqlite',
    needs: /sqlite/i,
  },
  { re: /\bnew\s+LiteDatabase\s*\(/g, engine: 'litedb' },
  { re: /\bjdbc:h2:/g, engine: 'h2' },
  { re: /\bjdbc:sqlite:/g, engine: 'sqlite' },
  { re: /\bjdbc:hsqldb:/g, engine: 'hsqldb' },
  { re: /\bjdbc:derby:/g, engine: 'derby' },
  { re: /\bsqlite(?:\+\w+)?:\/\/\//g, engine: 'sqlite' },
  { re: /\bdjango\.db\.backends\.sqlite3\b/g, engine: 'sqlite' },
  { re: /\bsqlite3\.connect\s*\(/g, engine: 'sqlite' },
  { re: /\bnew\s+sqlite3\.Database\s*\(/g, engine: 'sqlite' },
  { re: /\bsql\.Open\s*\(\s*"sqlite3?"/g, engine: 'sqlite' },
  { re: /\bsqlite\.Open\s*\(/g, engine: 'sqlite', needs: /gorm|sqlite/i },
  { re: /\bduckdb\.connect\s*\(/g, engine: 'duckdb' },
  { re: /\bUseInMemoryDatabase\s*\(/g, engine: 'in-memory' },
];

/** Server SQL engines, and the embedded SQL engines that stand in for them in development. */
const SQL_SERVERS = new Set(['postgres', 'mysql', 'mariadb', 'mssql', 'sqlserver', 'oracle']);
/**
 * .NET providers of SQL servers that are no client of their own here (the connection string
 * names the server): EF Core's SQL Server and Oracle providers and the ADO.NET SQL Server
 * clients. A unit referencing one next to an embedded store can open the server instead.
 */
const DOTNET_SQL_SERVER: [RegExp, string][] = [
  [
    /^(microsoft\.entityframeworkcore\.sqlserver|microsoft\.data\.sqlclient|system\.data\.sqlclient)$/i,
    'sqlserver',
  ],
  [/^(oracle\.entityframeworkcore|oracle\.manageddataaccess(\.core)?)$/i, 'oracle'],
];
const SQL_EMBEDDED = new Set(['sqlite', 'h2', 'hsqldb', 'derby', 'in-memory']);

/**
 * A settings key choosing the unit's store (`Provider: "sqlite"` in a Go default config,
 * `provider: sqlite` in YAML, `DB_TYPE=sqlite`), not a comparison (`== "sqlite"`, `case "sqlite"`).
 * A typed field's default counts too (pydantic-settings `DB_ENGINE: str = "sqlite"`, TypeScript
 * `dbType: string = 'sqlite'`: a plain type name, optionally `Optional[str]`-like), and so does a
 * value followed by a line comment (`DB_ENGINE: sqlite # or postgres`, `"sqlite"  // default`).
 */
const CHOICE =
  /\b(?:provider|driver|dialect|engine|adapter|backend|(?:db|database)_?(?:type|driver|engine|provider))["']?[ \t]*(?::|=(?!=)|:[ \t]*[A-Za-z_][\w.]*(?:\[[\w., ]*\])?[ \t]*=(?!=))[ \t]*["'`]?([\w-]+)["'`]?[ \t]*[,;)}]?[ \t]*(?:(?:#|\/\/).*)?$/gim;

/**
 * Whether the unit's own (non-test) code or settings choose the embedded engine as the store
 * (docs/decisions.md, "An embedded store its settings choose"): then it is the unit's store by
 * default, the SQL server client the alternative, not the reverse.
 */
function chosenByDefault(files: SourceFile[], engine: string): boolean {
  const names = engine === 'sqlite' ? /^sqlite3?$/i : new RegExp(`^${engine}$`, 'i');
  for (const file of files) {
    if (!scannable(file.path) || isGoTestSupport(file.path, file.text)) continue;
    if (file.text.length > MAX_CHARS) continue;
    for (const m of file.text.matchAll(CHOICE)) {
      if (!names.test(m[1] ?? '')) continue;
      const lineStart = file.text.lastIndexOf('\n', m.index) + 1;
      if (!/^\s*(\/\/|#|--|\*|<!--)/.test(file.text.slice(lineStart, m.index))) return true;
    }
  }
  return false;
}

function scannable(path: string): boolean {
  if (isTestPath(path)) return false;
  return languageOf(path) !== null || /\.php$/i.test(path) || CONFIG.test(basename(path));
}

/** `datastore-declared` (embedded) and `embedded-store` evidence of every unit. */
export function embeddedStoreEvidence(model: CodeModel): Evidence[] {
  const filesOf = (u: Unit) => model.filesByUnit.get(u.key) ?? [];
  // A database file named by one unit only names that unit's store (two units opening `app.db`
  // name neither).
  const named = new Map<string, number>();
  for (const unit of model.units) {
    const name = sqliteFileName(filesOf(unit));
    if (name !== null) named.set(name, (named.get(name) ?? 0) + 1);
  }
  const out: Evidence[] = [];
  for (const unit of model.units) {
    const name = sqliteFileName(filesOf(unit));
    out.push(
      ...unitStores(
        unit,
        filesOf(unit),
        name !== null && named.get(name) === 1 ? name : null,
        referencedProjects(unit, model),
      ),
    );
  }
  return out;
}

/** An ADO.NET connection string's file (`Data Source=discountdb`, `Filename=data/app.db`). */
const FILE_SOURCE = /\b(?:Data Source|DataSource|Filename)\s*=\s*([^;"'\n]*)([^"'\n]*)/gi;
/** Keys of a database server's connection string, never an SQLite file's. */
const SERVER_KEYS = /\b(?:Server|Host|Initial Catalog|Database|Integrated Security|Port)\s*=/i;

/**
 * The one SQLite database file the unit's code and settings name in a connection string, as a
 * name (`discountdb`; `app.db` -> `app`), or null: none, several, in-memory, or not a plain
 * file name (a placeholder).
 */
function sqliteFileName(files: SourceFile[]): string | null {
  const names = new Set<string>();
  for (const file of files) {
    if (!scannable(file.path) || file.text.length > MAX_CHARS) continue;
    for (const m of file.text.matchAll(FILE_SOURCE)) {
      const value = (m[1] ?? '').trim();
      if (SERVER_KEYS.test(m[0])) continue;
      const base = (value.split(/[\\/]/).pop() ?? '').replace(/\.(?:db|sqlite3?)$/i, '');
      if (!/^[A-Za-z0-9][\w.-]*$/.test(base) || /memory/i.test(m[0])) return null;
      names.add(base.toLowerCase());
    }
  }
  return names.size === 1 ? [...names][0]! : null;
}

/** Project references followed at most this deep (a solution's layers are few). */
const MAX_REFERENCE_DEPTH = 8;

/**
 * The .NET projects `unit` references through `<ProjectReference>`, transitively: a shared
 * persistence project (`BuildingBlocks.Persistence.Postgres`) brings its SQL server provider into
 * every project that references it, as NuGet restores it. Other ecosystems: none.
 */
function referencedProjects(unit: Unit, model: CodeModel): Unit[] {
  const out = new Map<string, Unit>();
  let frontier = [unit];
  for (let depth = 0; depth < MAX_REFERENCE_DEPTH && frontier.length > 0; depth++) {
    const next: Unit[] = [];
    for (const u of frontier)
      for (const d of u.manifests.flatMap((m) => m.dependencies)) {
        const local = d.attributes.local_path;
        if (d.ecosystem !== 'nuget' || d.attributes.project_reference !== true) continue;
        if (typeof local !== 'string') continue;
        const ref = model.ownerOf(local);
        if (!ref || ref.key === unit.key || out.has(ref.key)) continue;
        out.set(ref.key, ref);
        next.push(ref);
      }
    frontier = next;
  }
  return [...out.values()];
}

function unitStores(
  unit: Unit,
  files: SourceFile[],
  fileName: string | null,
  references: Unit[] = [],
): Evidence[] {
  const deps = unit.manifests.flatMap((m) => m.dependencies.map((d) => d.name)).join('\n');
  const first = new Map<string, { file: SourceFile; line: number; form: string }>();
  for (const file of files) {
    if (!scannable(file.path) || file.text.length > MAX_CHARS) continue;
    let idx: LineIndex | null = null;
    for (const form of FORMS) {
      if (first.has(form.engine)) continue;
      if (form.needs && !form.needs.test(deps) && !form.needs.test(file.text)) continue;
      form.re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = form.re.exec(file.text)) !== null) {
        // A commented-out line is no store: the line must not start with a comment marker.
        idx ??= new LineIndex(file.text);
        const line = idx.lineAt(m.index);
        if (/^\s*(\/\/|#|--|\*|<!--)/.test(file.text.slice(idx.lineStart(line), m.index))) continue;
        first.set(form.engine, { file, line, form: m[0].trim() });
        break;
      }
    }
  }
  const servers = [
    ...new Set(
      [unit, ...references]
        .flatMap((u) => u.manifests)
        .flatMap((m) => m.dependencies)
        .map(
          (d) =>
            classifyClient(d.ecosystem, d.name)?.engine ??
            (d.ecosystem === 'nuget'
              ? DOTNET_SQL_SERVER.find(([re]) => re.test(d.name))?.[1]
              : undefined),
        )
        .filter((e): e is string => e !== undefined && SQL_SERVERS.has(e)),
    ),
  ].sort();
  const out: Evidence[] = [];
  for (const [engine, at] of [...first].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    // The file an SQLite store opens, when the unit alone names it (reconcile's alias).
    const database = engine === 'sqlite' ? fileName : null;
    const key = entityKey('datastore', `${unit.name}-${engine}`);
    const span = { start: at.line, end: at.line };
    if (optionalImport(at.file, at.form)) {
      out.push(
        evidence(at.file, span, {
          source: 'code',
          provider: 'embedded-store',
          kind: 'embedded-store-optional',
          subject: unit.key,
          summary: `${unit.name} can open an embedded ${engine} database from an optional integration whose driver it imports only if installed (${at.form})`,
          attributes: { engine, embedded: true, optional: true },
        }),
      );
      continue;
    }
    const testDriver = testOnlyDriver(unit, engine);
    if (testDriver !== null) {
      out.push(
        evidence(at.file, span, {
          source: 'code',
          provider: 'embedded-store',
          kind: 'embedded-store-test-driver',
          subject: unit.key,
          summary: `${unit.name} names an embedded ${engine} database whose driver (${testDriver}) it declares only for its tests, so the built program cannot open it (${at.form})`,
          attributes: { engine, embedded: true, test_driver: testDriver },
        }),
      );
      continue;
    }
    if (servers.length > 0 && SQL_EMBEDDED.has(engine) && !chosenByDefault(files, engine)) {
      out.push(
        evidence(at.file, span, {
          source: 'code',
          provider: 'embedded-store',
          kind: 'embedded-store-alternative',
          subject: unit.key,
          summary: `${unit.name} can open an embedded ${engine} database, an alternative to its ${servers.join(', ')} server (${at.form})`,
          attributes: { engine, embedded: true, alternative_to: servers },
        }),
      );
      continue;
    }
    out.push(
      evidence(at.file, span, {
        source: 'code',
        provider: 'embedded-store',
        kind: 'datastore-declared',
        subject: key,
        summary: `${unit.name} opens an embedded ${engine} database${database !== null ? ` ${database}` : ''} in its own process (${at.form})`,
        attributes: {
          engine,
          embedded: true,
          owner: unit.key,
          ...(database !== null ? { database } : {}),
        },
      }),
      evidence(at.file, span, {
        source: 'code',
        provider: 'embedded-store',
        kind: 'embedded-store',
        subject: unit.key,
        relationship: 'connects_to',
        object: key,
        summary: `${unit.name} stores data in its embedded ${engine} database`,
        attributes: { engine, embedded: true },
      }),
    );
  }
  return out;
}

/** The JVM driver artifacts of embedded engines (Maven `groupId:artifactId`). */
const JVM_DRIVERS: Record<string, RegExp> = {
  hsqldb: /^(?:org\.hsqldb|hsqldb):hsqldb\b/,
  h2: /^com\.h2database:h2$/,
  derby: /^org\.apache\.derby:derby\b/,
  sqlite: /^org\.xerial:sqlite-jdbc$/,
};

/**
 * The engine's JVM driver, when the unit's Maven or Gradle manifests declare it and only in test
 * scope (`<scope>test</scope>`, `testImplementation`): a test-scoped artifact is never on the
 * built program's class path (not packaged into its JAR or WAR), so the program cannot open the
 * store; else null.
 */
function testOnlyDriver(unit: Unit, engine: string): string | null {
  const re = JVM_DRIVERS[engine];
  if (!re) return null;
  const deps = unit.manifests
    .flatMap((m) => m.dependencies)
    .filter((d) => d.ecosystem === 'maven' && re.test(d.name));
  return deps.length > 0 && deps.every((d) => d.dev) ? (deps[0]?.name ?? null) : null;
}

/**
 * The Python module of a `module.connect(` form is imported only inside a `try:` block whose
 * handler catches ImportError / ModuleNotFoundError (or everything).
 */
function optionalImport(file: SourceFile, form: string): boolean {
  if (languageOf(file.path) !== 'python') return false;
  const mod = /^(\w+)\.connect\b/.exec(form)?.[1];
  if (!mod) return false;
  const lines = file.text.split('\n');
  const indent = (l: string) => /^\s*/.exec(l)?.[0].length ?? 0;
  const importRe = new RegExp(`^\\s*(?:import\\s+${mod}\\b|from\\s+${mod}\\b[\\w.]*\\s+import\\b)`);
  let sawImport = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (!importRe.test(line)) continue;
    sawImport = true;
    const own = indent(line);
    let t = i - 1;
    while (t >= 0 && (/^\s*(#.*)?$/.test(lines[t] ?? '') || indent(lines[t] ?? '') >= own)) t--;
    const opener = lines[t] ?? '';
    if (t < 0 || !/^\s*try\s*:/.test(opener)) return false;
    let h = i + 1;
    while (
      h < lines.length &&
      (/^\s*(#.*)?$/.test(lines[h] ?? '') || indent(lines[h] ?? '') > indent(opener))
    )
      h++;
    if (
      !/^\s*except\s*(?::|\(?[\w., ]*\b(?:ImportError|ModuleNotFoundError|Exception)\b)/.test(
        lines[h] ?? '',
      )
    )
      return false;
  }
  return sawImport;
}
