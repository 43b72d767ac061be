/**
 * False edges and entities measured at first sight (issue 23, session 11), each a general rule:
 * a URL inside a regular expression, an upper-case placeholder host, a cloud instance metadata
 * probe and a `placeholder` / `example` value are no addresses (analysis/code/url-shapes.ts); an
 * embedded store opened by an optional integration (driver imported under `try/except
 * ImportError`) is no datastore (analysis/code/embedded.ts); a `setup.py` that is no packaging
 * script declares no unit (analysis/code/manifests.ts); a package in the CI folder is a tool
 * (analysis/code/classify.ts); `depends_on` names are interpolated (analysis/cloud/compose.ts).
 * Small systems written for this test.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const WEB: Record<string, string> = {
  'web/package.json': JSON.stringify({
    name: 'web',
    scripts: { start: 'node server.js' },
    dependencies: { express: '^4.0.0' },
  }),
  // A pattern matched against a tool's output: `github\.com` is no host `github`.
  'web/src/pr.ts': `export const prUrl = (line: string) =>
  new RegExp('(https://github\\\\.com/[^\\\\s]+/pull/\\\\d+)').exec(line)?.[1];
`,
  // An SDK default the user replaces: HOSTNAME is a slot.
  'web/src/client.ts': `export const config = { endpoint: 'https://HOSTNAME/v1', project: '' };
export const orders = () => fetch('http://orders/api/orders');
export const bill = () => post("{\\"target\\": \\"http://billing/api\\"}");
`,
  // Samples shown in a form and a catalogue of templates.
  'web/src/form.tsx': `export const F = () => <input placeholder="https://sso.acme-corp.com" />;
export const templates = [
  {
    name: 'MONGO_URI',
    placeholder:
      'mongodb+srv://app:secret@cluster0.abcd12.mongodb.net/?retryWrites=true',
  },
];
`,
};

test('URLs in a pattern, an upper-case placeholder host and a placeholder value are no edges', async (t) => {
  const { graph } = await analyzeFiles(files(WEB));
  const edges = connections(graph);
  const keys = entityKeys(graph);
  t.true(edges.includes('service:web -> service:orders'), edges.join('\n'));
  // An escaped quote after a URL is string syntax, not a pattern.
  t.true(edges.includes('service:web -> service:billing'), edges.join('\n'));
  for (const k of keys) t.false(/github|hostname|acme-corp|mongodb\.net/.test(k), k);
  t.false(
    edges.some((e) => /github|hostname|acme-corp|mongodb/.test(e)),
    edges.join('\n'),
  );
});

const PY: Record<string, string> = {
  'runner/requirements.txt': 'flask==3.0\nrequests==2.31\nduckdb==1.0\n',
  'runner/app.py': `import requests
from flask import Flask
app = Flask(__name__)

def on_gce():
    try:
        requests.get("http://metadata.google.internal")
    except requests.exceptions.ConnectionError:
        return False
    return True
`,
  // An optional connector: its driver may be absent, the file its user configures.
  'runner/connectors/duck.py': `import logging

try:
    import duckdb

    enabled = True
except ImportError:
    enabled = False


class Duck:
    def connect(self):
        self.con = duckdb.connect(self.dbpath)
`,
  // A Flask view of the first-run setup, called setup.py: no unit.
  'runner/handlers/setup.py': `from flask import render_template

def setup():
    return render_template("setup.html")
`,
  // A real packaging script: a unit.
  'acmelib/setup.py': `from setuptools import setup

setup(name="acmelib", install_requires=["requests"])
`,
  'acmelib/acmelib/__init__.py': 'VERSION = "1"\n',
  // A unit that always imports duckdb keeps its embedded store.
  'reports/requirements.txt': 'duckdb==1.0\n',
  'reports/main.py': 'import duckdb\ncon = duckdb.connect("reports.duckdb")\n',
};

test('a metadata probe, an optional driver and a setup.py view add no entity; real ones stay', async (t) => {
  const { graph } = await analyzeFiles(files(PY));
  const edges = connections(graph);
  const keys = entityKeys(graph);
  t.false(
    keys.some((k) => /metadata/.test(k)),
    keys.join('\n'),
  );
  t.false(keys.includes('datastore:runner-duckdb'), keys.join('\n'));
  t.false(keys.includes('service:handlers'), keys.join('\n'));
  t.true(keys.includes('service:acmelib'), keys.join('\n'));
  t.true(edges.includes('service:reports -> datastore:reports-duckdb'), edges.join('\n'));
});

test('a package in the CI folder is no service; depends_on names are interpolated', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      '.github/workflows/checks/locale/package.json': JSON.stringify({
        name: 'checks-locale',
        scripts: { start: 'node index.js' },
        dependencies: { glob: '^10.0.0' },
      }),
      '.github/workflows/checks/locale/index.js': 'console.log("ok");\n',
      'docker-compose.yml': `services:
  api:
    image: acme/api:1
    depends_on:
      - \${DB_HOST:-postgresql}
  postgresql:
    image: postgres:16
`,
    }),
  );
  const keys = entityKeys(graph);
  t.false(keys.includes('service:checks-locale'), keys.join('\n'));
  t.false(
    keys.some((k) => k.includes('db-host')),
    keys.join('\n'),
  );
  const deps = graph.relationships
    .filter((r) => r.kind === 'depends_on')
    .map((r) => `${r.source_key} -> ${r.target_key}`);
  t.true(
    deps.some((d) => d.startsWith('service:api -> ') && d.endsWith(':postgresql')),
    deps.join('\n'),
  );
});

test('a DSN whose scheme is no network protocol names an adapter, not a container', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  api:
    image: acme/api:1
    environment:
      SMS_PROVIDER: sms://user:secret@mock
      STORAGE_DEVICE: local://default
      MAIL_URL: smtp://mailer:25
`,
    }),
  );
  const edges = connections(graph);
  const keys = entityKeys(graph);
  t.false(keys.includes('service:mock'), keys.join('\n'));
  t.false(keys.includes('service:default'), keys.join('\n'));
  // A network protocol's short host is still a container on the compose network.
  t.true(
    edges.some((e) => e.startsWith('service:api -> ') && e.endsWith(':mailer')),
    edges.join('\n'),
  );
});
