/**
 * Configuration has one home (platform/config.ts): production code reads no environment variable
 * elsewhere, README's configuration table is CONFIG_VARIABLES row for row, and a bad value stops
 * loadConfig with an error naming the variable.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import ts from 'typescript';
import {
  CONFIG_VARIABLES,
  analysisThreads,
  loadConfig,
  loadStartConfig,
  processLauncherOn,
} from '../platform/config';

const ROOT = path.resolve(__dirname, '..');
const PRODUCTION = [
  'api',
  'activities',
  'analysis',
  'db',
  'domain',
  'platform',
  'worker',
  'workflows',
  'scripts',
];
const CONFIG_FILE = 'platform/config.ts';

/**
 * Uses of the environment outside platform/config.ts that are not configuration: the standard
 * variables a child process or an executable lookup needs, handed on as they are.
 */
const ALLOWED: ReadonlyArray<{ file: string; code: string; reason: string }> = [
  {
    file: 'activities/audits/source/git-run.ts',
    code: 'process.env[name]',
    reason: "copies PATH, HOME, proxy and certificate variables into git's environment",
  },
  {
    file: 'activities/audits/source/git-run.ts',
    code: 'NodeJS.ProcessEnv',
    reason: 'the type of the environment git runs with',
  },
  {
    file: 'activities/audits/source/process-launcher.ts',
    code: 'NodeJS.ProcessEnv',
    reason: "the type of a command's environment, given to spawn as it is",
  },
  {
    file: 'platform/dev-services.ts',
    code: 'process.env.PATH',
    reason: 'finds the temporal and go executables on PATH, as a shell does',
  },
  {
    file: 'platform/dev-services.ts',
    code: '...process.env',
    reason: "go install runs with the caller's environment plus GOBIN",
  },
  {
    file: 'platform/demo-repo.ts',
    code: '...process.env',
    reason: "git runs with the caller's environment minus its global config",
  },
];

interface Use {
  file: string;
  line: number;
  code: string;
}

const isProcess = (e: ts.Expression) => /^(globalThis\.)?process$/.test(e.getText());

/** Every place `text` touches the environment: process.env in any form, `env` of node:process. */
function environmentUses(file: string, text: string): Use[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const uses: Use[] = [];
  const add = (node: ts.Node, code: string) =>
    uses.push({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      code,
    });
  const visit = (node: ts.Node): void => {
    const processEnv =
      (ts.isPropertyAccessExpression(node) &&
        node.name.text === 'env' &&
        isProcess(node.expression)) ||
      (ts.isElementAccessExpression(node) &&
        isProcess(node.expression) &&
        ts.isStringLiteralLike(node.argumentExpression) &&
        node.argumentExpression.text === 'env');
    if (processEnv) {
      const parent = node.parent;
      if (
        (ts.isPropertyAccessExpression(parent) || ts.isElementAccessExpression(parent)) &&
        parent.expression === node
      )
        add(node, parent.getText());
      else if (ts.isSpreadAssignment(parent) || ts.isSpreadElement(parent))
        add(node, '...process.env');
      else add(node, 'process.env');
    }
    if (ts.isTypeReferenceNode(node) && /(^|\.)ProcessEnv$/.test(node.typeName.getText()))
      add(node, 'NodeJS.ProcessEnv');
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      /^(node:)?process$/.test(node.moduleSpecifier.text)
    )
      add(node, node.getText());
    if (
      file.startsWith('workflows/') &&
      ts.isImportDeclaration(node) &&
      !node.importClause?.isTypeOnly &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      /platform\/config$/.test(node.moduleSpecifier.text)
    )
      add(node, `workflow code imports ${node.moduleSpecifier.text}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(rel);
    return /\.[cm]?[jt]s$/.test(entry.name) ? [rel] : [];
  });
}

let scanned: Use[] | undefined;
const productionUses = (): Use[] =>
  (scanned ??= PRODUCTION.flatMap(sourceFiles)
    .filter((file) => file !== CONFIG_FILE)
    .flatMap((file) => {
      let text: string;
      try {
        text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      } catch (err) {
        // A file removed since the folder was listed reads nothing.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
      return environmentUses(file, text);
    }));

const allowed = (use: Use) => ALLOWED.some((a) => a.file === use.file && a.code === use.code);

test('the scan sees each way of reading the environment, and not text that mentions it', (t) => {
  const codes = (text: string, file = 'api/x.ts') => environmentUses(file, text).map((u) => u.code);
  t.deepEqual(codes('const a = process.env.A;'), ['process.env.A']);
  t.deepEqual(codes("const a = process.env['A'];"), ["process.env['A']"]);
  t.deepEqual(codes('const { A, B } = process.env;'), ['process.env']);
  t.deepEqual(codes('f(process.env);'), ['process.env']);
  t.deepEqual(codes("const a = process['env'].A;"), ["process['env'].A"]);
  t.deepEqual(codes('const a = globalThis.process.env.A;'), ['globalThis.process.env.A']);
  t.deepEqual(codes('spawn(c, { env: { ...process.env, X: "1" } });'), ['...process.env']);
  t.deepEqual(codes('function f(env: NodeJS.ProcessEnv) { return env.A; }'), ['NodeJS.ProcessEnv']);
  t.deepEqual(codes("import { env } from 'node:process';"), [
    "import { env } from 'node:process';",
  ]);
  t.deepEqual(codes("import { loadConfig } from '../platform/config';", 'workflows/w.ts'), [
    'workflow code imports ../platform/config',
  ]);
  t.deepEqual(codes("import type { Config } from '../platform/config';", 'workflows/w.ts'), []);
  // Text about the environment (the demo repository's files, comments) is not a read.
  t.deepEqual(codes("const s = 'const u = process.env.URL;'; // process.env.X"), []);
});

test('production code reads the environment only in platform/config.ts', (t) => {
  const uses = productionUses();
  t.true(uses.length > 0, 'the allowed uses are found, so the scan reads the files');
  const unexpected = uses.filter((u) => !allowed(u)).map((u) => `${u.file}:${u.line} ${u.code}`);
  t.deepEqual(
    unexpected,
    [],
    'read the variable in platform/config.ts (CONFIG_VARIABLES, Config) and pass the value in',
  );
});

test('every allowed use of the environment is still there', (t) => {
  const uses = productionUses();
  const stale = ALLOWED.filter((a) => !uses.some((u) => u.file === a.file && u.code === a.code));
  t.deepEqual(stale, [], 'remove allow-list entries whose code is gone');
});

// ---------------------------------------------------------------------------------------------
// README's table

interface Row {
  name: string;
  default: string;
  usedBy: string;
  description: string;
}

/** The rows of README's configuration table (header `| Variable | Default | Used by | Meaning |`). */
function readmeRows(): Row[] {
  const lines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
  const header = lines.findIndex((l) => l.startsWith('|') && cells(l)[0] === 'Variable');
  if (header < 0) throw new Error('README has no table whose first column is "Variable"');
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [name = '', def = '', usedBy = '', description = ''] = cells(line);
    rows.push({ name: name.replace(/^`|`$/g, ''), default: def, usedBy, description });
  }
  return rows;
}

const markdownRow = (r: Row) => `| \`${r.name}\` | ${r.default} | ${r.usedBy} | ${r.description} |`;

test('README has a row for every configuration variable and for no other', (t) => {
  const documented = readmeRows().map((r) => r.name);
  const known = CONFIG_VARIABLES.map((v) => v.name as string);
  t.deepEqual(
    {
      undocumented: known.filter((n) => !documented.includes(n)),
      unknown: documented.filter((n) => !known.includes(n)),
    },
    { undocumented: [], unknown: [] },
  );
});

test("README's rows say what CONFIG_VARIABLES says: defaults, users, meaning", (t) => {
  const readme = new Map(readmeRows().map((r) => [r.name, r]));
  for (const v of CONFIG_VARIABLES) {
    const row = readme.get(v.name);
    if (!row) continue; // reported by the test above
    t.is(row.default, v.default, `${v.name}: default`);
    t.deepEqual(row, { ...v }, `${v.name}: expected README row ${markdownRow(v)}`);
  }
  t.deepEqual(
    readmeRows().map((r) => r.name),
    CONFIG_VARIABLES.map((v) => v.name),
    'the same order',
  );
});

test('a default shown as a value is the value an unset variable gets', (t) => {
  const unset = loadConfig({});
  // `$DATA_DIR/blobs` and the like name a computed default, not a value.
  const literal = CONFIG_VARIABLES.flatMap((v) => {
    const value = /^`([^`$]+)`/.exec(v.default)?.[1];
    return value === undefined ? [] : [{ name: v.name, value }];
  });
  t.true(literal.length >= 25, `${literal.length} defaults are checked`);
  for (const { name, value } of literal)
    t.deepEqual(loadConfig({ [name]: value }), unset, `${name}=${value}`);
});

test('npm start names the demo workspace for local repositories and tokenless reads; others do not', (t) => {
  t.deepEqual(loadConfig({}).localRepositoryWorkspaces, []);
  t.false(loadConfig({}).demoPublicRead);
  t.deepEqual(loadStartConfig({}).localRepositoryWorkspaces, ['demo']);
  t.true(loadStartConfig({}).demoPublicRead);
  t.deepEqual(loadStartConfig({ LOCAL_REPOSITORY_WORKSPACES: 'acme' }).localRepositoryWorkspaces, [
    'acme',
  ]);
  t.false(loadStartConfig({ DEMO_PUBLIC_READ: 'false' }).demoPublicRead);
  t.deepEqual(
    loadConfig({ LOCAL_REPOSITORY_WORKSPACES: ' acme, ,team-* ' }).localRepositoryWorkspaces,
    ['acme', 'team-*'],
  );
});

test('repository source settings: ssh workspaces and allowed hosts are parsed or refused by name', (t) => {
  const config = loadConfig({
    REPOSITORY_SSH_WORKSPACES: JSON.stringify({
      acme: { known_hosts: '/etc/archaudit/known_hosts', identity_file: '/etc/archaudit/key' },
      beta: { known_hosts: '/etc/archaudit/beta_hosts' },
    }),
    REPOSITORY_ALLOWED_HOSTS: 'gitlab.corp, 10.1.0.0/16,fd00::1',
  });
  t.deepEqual(config.repositorySshWorkspaces, {
    acme: { knownHostsFile: '/etc/archaudit/known_hosts', identityFile: '/etc/archaudit/key' },
    beta: { knownHostsFile: '/etc/archaudit/beta_hosts', identityFile: null },
  });
  t.deepEqual(config.repositoryAllowedHosts, ['gitlab.corp', '10.1.0.0/16', 'fd00::1']);
  const refused: Array<[string, string, RegExp]> = [
    ['REPOSITORY_SSH_WORKSPACES', '[1]', /^REPOSITORY_SSH_WORKSPACES must be a JSON object$/],
    ['REPOSITORY_SSH_WORKSPACES', '{"a":{}}', /\.a\.known_hosts must be an absolute path/],
    [
      'REPOSITORY_SSH_WORKSPACES',
      '{"a":{"known_hosts":"kh"}}',
      /\.a\.known_hosts must be an absolute path/,
    ],
    [
      'REPOSITORY_SSH_WORKSPACES',
      '{"a":{"known_hosts":"/kh","agent":true}}',
      /\.a must be \{"known_hosts"/,
    ],
    ['REPOSITORY_ALLOWED_HOSTS', '10.0.0.0/33', /"10\.0\.0\.0\/33" is not a CIDR range/],
    ['REPOSITORY_ALLOWED_HOSTS', 'http://x', /"http:\/\/x" is not a host name/],
  ];
  for (const [name, value, message] of refused)
    t.throws(() => loadConfig({ [name]: value }), { message }, `${name}=${value}`);
});

test('loadConfig reads exactly the variables of CONFIG_VARIABLES', (t) => {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_target, key) => {
      if (typeof key === 'string') read.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  t.deepEqual([...read].sort(), CONFIG_VARIABLES.map((v) => v.name as string).sort());
});

// ---------------------------------------------------------------------------------------------
// Parsing at the edges

test('integers: bounds are accepted, beyond them and non-integers are refused by name', (t) => {
  t.is(loadConfig({ PORT: '0' }).port, 0);
  t.is(loadConfig({ PORT: '65535' }).port, 65535);
  t.is(loadConfig({ DECISION_HISTORY_LIMIT: '100' }).decisionHistoryLimit, 100);
  t.is(loadConfig({ DB_POOL_MAX: '' }).dbPoolMax, 20, 'empty is unset');
  const refused: Array<[string, string, RegExp]> = [
    ['PORT', '65536', /^PORT must be an integer from 0 to 65535, got "65536"$/],
    ['PORT', '80.5', /^PORT must be an integer from 0 to 65535, got "80.5"$/],
    ['DB_POOL_MAX', 'twenty', /^DB_POOL_MAX must be an integer >= 1, got "twenty"$/],
    ['DB_POOL_MAX', '0', /^DB_POOL_MAX must be an integer >= 1, got "0"$/],
    ['DECISION_HISTORY_LIMIT', '99', /^DECISION_HISTORY_LIMIT must be an integer >= 100/],
    ['GIT_TIMEOUT_MS', '-1', /^GIT_TIMEOUT_MS must be an integer >= 1000/],
    ['TEMPORAL_DEV_PORT', '70000', /^TEMPORAL_DEV_PORT must be an integer from 1 to 65535/],
    ['EMBEDDED_PG_PORT', 'auto', /^EMBEDDED_PG_PORT must be an integer from 0 to 65535/],
    ['ANALYSIS_THREADS', '0', /^ANALYSIS_THREADS must be an integer >= 1, got "0"$/],
  ];
  for (const [name, value, message] of refused)
    t.throws(() => loadConfig({ [name]: value }), { message }, `${name}=${value}`);
});

test('booleans: the usual spellings are read, a misspelled one is refused by name', (t) => {
  t.true(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy);
  t.false(loadConfig({}).trustProxy);
  t.false(loadConfig({ MIGRATE_ON_START: 'false' }).migrateOnStart);
  t.true(loadConfig({}).migrateOnStart);
  t.false(loadConfig({ PROCESS_LAUNCHER: 'off' }).processLauncher);
  t.false(processLauncherOn({ PROCESS_LAUNCHER: 'off' }));
  t.true(processLauncherOn({}));
  for (const [name, value] of [
    ['TRUST_PROXY', 'ture'],
    ['MIGRATE_ON_START', 'flase'],
    ['PROCESS_LAUNCHER', 'of'],
    ['DEMO_PUBLIC_READ', 'maybe'],
  ] as const) {
    t.throws(
      () => loadConfig({ [name]: value }),
      { message: `${name} must be true or false (or on/off), got "${value}"` },
      `${name}=${value}`,
    );
  }
});

test('choices and URLs: anything else is refused by name', (t) => {
  t.is(loadConfig({ LOG_LEVEL: 'warn' }).logLevel, 'warn');
  t.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), { message: /^LOG_LEVEL must be one of / });
  t.throws(() => loadConfig({ MODEL_MAX_TOKENS_PARAM: 'max_output_tokens' }), {
    message: /^MODEL_MAX_TOKENS_PARAM must be one of max_tokens, max_completion_tokens/,
  });
  t.throws(() => loadConfig({ MODEL_BASE_URL: 'ftp://models.example', MODEL_ID: 'm' }), {
    message: /^MODEL_BASE_URL must be an http\(s\) URL/,
  });
  t.throws(() => loadConfig({ MODEL_PRICES: '{' }), { message: /^MODEL_PRICES / });
  t.is(analysisThreads({ ANALYSIS_THREADS: '2' }), 2);
});
