/**
 * The rules every analyzer shares (analysis/shared): image references, secret names and literal
 * values, variable expansion, repository paths, YAML lines, evidence and ordering. One table per
 * rule; the rows where the CI and cloud analyzers used to disagree are marked.
 */
import crypto from 'node:crypto';
import test from 'ava';
import type { YAMLMap } from 'yaml';
import { keyKind, keyName, type AnalyzerOutput, type SourceFile } from '../analysis/evidence';
import { evidence, sortOutput } from '../analysis/shared/evidence';
import {
  imageAttributes,
  imageKey,
  isSha256Digest,
  parseImageRef,
} from '../analysis/shared/images';
import {
  basename,
  dirname,
  isDockerfile,
  isWithin,
  joinPath,
  normalizeDir,
  normalizePath,
  relativeTo,
  sortByPath,
  stem,
} from '../analysis/shared/paths';
import { isLiteralValue, isSecretName, looksLikeSecretValue } from '../analysis/shared/secrets';
import { LineIndex, compareStrings, errorMessage, uniqueSorted } from '../analysis/shared/text';
import { asArray, asString, isRecord } from '../analysis/shared/values';
import { expandVariables, isDynamic } from '../analysis/shared/variables';
import { parseYamlDocuments, parseYamlMapping } from '../analysis/shared/yaml';
import {
  internalName,
  isLocalHost,
  parseHostPort,
  parseUrl,
  parseUrlValue,
  targetKeyOf,
} from '../analysis/shared/urls';

const HEX = '0123456789abcdef'.repeat(4);
const span = (s: { start: number; end: number } | null | undefined) =>
  s ? [s.start, s.end] : null;

// ---------------------------------------------------------------------------------------------
// Images

interface ImageRow {
  repo: string;
  tag: string | null;
  digest: string | null;
  key: string | null;
  pinned: boolean;
  latest: boolean;
  unresolved: boolean;
}

const image = (repo: string, rest: Partial<ImageRow> = {}): ImageRow => ({
  repo,
  tag: null,
  digest: null,
  key: null,
  pinned: false,
  latest: false,
  unresolved: false,
  ...rest,
});

const IMAGES: [string, ImageRow][] = [
  ['nginx', image('nginx', { key: 'image:nginx', latest: true })],
  ['nginx:latest', image('nginx', { tag: 'latest', key: 'image:nginx', latest: true })],
  ['nginx:1.25', image('nginx', { tag: '1.25', key: 'image:nginx' })],
  ['docker.io/library/redis:7', image('redis', { tag: '7', key: 'image:redis' })],
  ['index.docker.io/library/redis', image('redis', { key: 'image:redis', latest: true })],
  ['library/redis:7', image('redis', { tag: '7', key: 'image:redis' })],
  [
    'docker.io/bitnami/kafka:3.6',
    image('bitnami/kafka', { tag: '3.6', key: 'image:bitnami-kafka' }),
  ],
  // A registry port is no tag.
  [
    'localhost:5000/team/api',
    image('localhost:5000/team/api', { key: 'image:localhost-5000-team-api', latest: true }),
  ],
  [
    'registry.acme.io:5000/team/api:2.1',
    image('registry.acme.io:5000/team/api', {
      tag: '2.1',
      key: 'image:registry.acme.io-5000-team-api',
    }),
  ],
  // Digests: `name@sha256:...` and `name:tag@sha256:...`; only a full sha256 pins.
  [
    `ghcr.io/acme/api@sha256:${HEX}`,
    image('ghcr.io/acme/api', {
      digest: `sha256:${HEX}`,
      key: 'image:ghcr.io-acme-api',
      pinned: true,
    }),
  ],
  [
    `ghcr.io/acme/api:1.2@sha256:${HEX}`,
    image('ghcr.io/acme/api', {
      tag: '1.2',
      digest: `sha256:${HEX}`,
      key: 'image:ghcr.io-acme-api',
      pinned: true,
    }),
  ],
  ['redis@sha256:abc', image('redis', { digest: 'sha256:abc', key: 'image:redis' })],
  // Variable defaults apply as if the variable were unset (the CI reader used to keep them).
  ['${IMG:-nginx}:1.25', image('nginx', { tag: '1.25', key: 'image:nginx' })],
  ['${IMG-nginx}', image('nginx', { key: 'image:nginx', latest: true })],
  [
    '${REG:-ghcr.io}/acme/api:${TAG:-1.0}',
    image('ghcr.io/acme/api', { tag: '1.0', key: 'image:ghcr.io-acme-api' }),
  ],
  [
    `\${IMG:-nginx@sha256:${HEX}}`,
    image('nginx', { digest: `sha256:${HEX}`, key: 'image:nginx', pinned: true }),
  ],
  // Without a default nothing can be named (the cloud readers used to key `${IMG}` as `image:img`).
  ['${IMG}', image('${IMG}', { unresolved: true })],
  ['${IMG}:1.25', image('${IMG}', { tag: '1.25', unresolved: true })],
  ['$REGISTRY/api:1', image('$REGISTRY/api', { tag: '1', unresolved: true })],
  // The `:` of `${VAR:?message}` is no tag separator.
  ['${IMAGE:?set IMAGE}', image('${IMAGE:?set IMAGE}', { unresolved: true })],
  ['<< parameters.image >>', image('<< parameters.image >>', { unresolved: true })],
  // A known repository with an unknown tag keeps its key; whether it is latest is unknown.
  [
    'acme/api:${TAG}',
    image('acme/api', { tag: '${TAG}', key: 'image:acme-api', unresolved: true }),
  ],
  [
    'ghcr.io/acme/web:${{ github.sha }}',
    image('ghcr.io/acme/web', {
      tag: '${{ github.sha }}',
      key: 'image:ghcr.io-acme-web',
      unresolved: true,
    }),
  ],
  ['docker://alpine:3.19', image('alpine', { tag: '3.19', key: 'image:alpine' })],
];

test('parseImageRef: registry, repository, tag, digest, defaults, and the key it names', (t) => {
  for (const [written, expected] of IMAGES) {
    const ref = parseImageRef(written);
    if (!ref) {
      t.fail(`${written}: not read`);
      continue;
    }
    const attrs = imageAttributes(ref);
    t.deepEqual(
      {
        repo: ref.repo,
        tag: ref.tag,
        digest: ref.digest,
        key: imageKey(ref),
        pinned: ref.pinned,
        latest: attrs.latest,
        unresolved: attrs.unresolved === true,
      },
      expected,
      written,
    );
  }
});

test('parseImageRef: the text as written is kept (trimmed); blank text names no image', (t) => {
  t.is(parseImageRef('  nginx:1  ')?.raw, 'nginx:1');
  t.is(parseImageRef('docker://alpine')?.raw, 'docker://alpine');
  t.is(parseImageRef('${IMG:-nginx}')?.raw, '${IMG:-nginx}');
  t.is(parseImageRef(''), null);
  t.is(parseImageRef('   '), null);
});

test('isSha256Digest: only a full sha256 pins an image', (t) => {
  const rows: [string | null, boolean][] = [
    [`sha256:${HEX}`, true],
    [`SHA256:${HEX.toUpperCase()}`, true],
    ['sha256:abc', false],
    [`sha512:${HEX}${HEX}`, false],
    [null, false],
  ];
  for (const [digest, pinned] of rows) t.is(isSha256Digest(digest), pinned, String(digest));
});

test('imageAttributes: the facts every image reference carries', (t) => {
  const ref = parseImageRef(`redis:7@sha256:${HEX}`);
  t.deepEqual(ref && imageAttributes(ref), {
    image: `redis:7@sha256:${HEX}`,
    repo: 'redis',
    tag: '7',
    digest: `sha256:${HEX}`,
    pinned: true,
    latest: false,
  });
});

// ---------------------------------------------------------------------------------------------
// Secrets

const SECRET_NAMES: [string, boolean][] = [
  ['PASSWORD', true],
  ['POSTGRES_PASSWORD', true],
  ['DB_PASSWD', true],
  ['dbpassword', true],
  // `PASS` as the last segment (the CI reader used to miss both).
  ['PASS', true],
  ['DB_PASS', true],
  ['smtpPass', true],
  ['DB_PWD', true],
  ['SECRET', true],
  ['client_secret', true],
  ['AWS_SECRET_ACCESS_KEY', true],
  ['SECRET_KEY_BASE', true],
  ['NPM_TOKEN', true],
  ['authToken', true],
  ['AUTHTOKEN', true],
  ['API_KEY', true],
  ['APIKEY', true],
  ['api-key', true],
  ['x.api.key', true],
  ['apiKey', true],
  ['APIKey', true],
  ['PRIVATE_KEY', true],
  ['privateKey', true],
  ['SSH_KEY', true],
  ['DEPLOY_KEY', true],
  ['STORAGE_ACCOUNT_KEY', true],
  ['GPG_PASSPHRASE', true],
  ['CREDENTIALS', true],
  ['DOCKER_CREDENTIAL', true],
  ['', false],
  ['LOG_LEVEL', false],
  // `KEY` needs a qualifier (the CI reader used to flag every name ending in KEY).
  ['KEY', false],
  ['hash_key', false],
  ['CACHE_KEY', false],
  ['SORT_KEY', false],
  ['PUBLIC_KEY', false],
  ['MONKEY', false],
  // A last segment naming where or which secret.
  ['POSTGRES_PASSWORD_FILE', false],
  ['SECRET_NAME', false],
  ['SECRET_ARN', false],
  ['TOKEN_URL', false],
  ['TOKEN_TYPE', false],
  ['kms_key_id', false],
  ['AWS_ACCESS_KEY_ID', false],
  ['PASSWORD_MIN_LENGTH', false],
  // Whole segments only.
  ['PASSPORT_URL', false],
  ['PASSPORT_NUMBER', false],
  ['TOKENIZER_MODEL', false],
  ['BYPASS', false],
  ['PASS_THROUGH', false],
  // The shell's working directory.
  ['PWD', false],
  ['OLDPWD', false],
];

test('isSecretName: whole segments, qualified KEY, and names about a secret that are none', (t) => {
  for (const [name, secret] of SECRET_NAMES) t.is(isSecretName(name), secret, name);
});

const LITERALS: [unknown, boolean][] = [
  ['hunter2', true],
  ['s3cr3t-value', true],
  ['pa$$word', true],
  ['0', true],
  [12345, true],
  [undefined, false],
  [null, false],
  [true, false],
  [{ value: 'x' }, false],
  ['', false],
  ['   ', false],
  ['true', false],
  ['False', false],
  ['yes', false],
  ['no', false],
  ['null', false],
  ['~', false],
  ['$DB_PASSWORD', false],
  ['${DB_PASSWORD}', false],
  ['$(password)', false],
  ['${{ secrets.TOKEN }}', false],
  ['prefix-${TOKEN}', false],
  ['%DB_PASSWORD%', false],
  ['{{ .Values.password }}', false],
  ['<< pipeline.parameters.token >>', false],
];

test('isLiteralValue: written down as it is, not a reference or a boolean', (t) => {
  for (const [value, literal] of LITERALS) t.is(isLiteralValue(value), literal, String(value));
});

test('looksLikeSecretValue: credentials recognised by their shape', (t) => {
  const rows: [string, boolean][] = [
    ['sk_live_abcdEFGH12345678', true],
    ['AKIAABCDEFGHIJKLMNOP', true],
    ['ghp_abcdefghijklmnopqrstuvwxyz', true],
    ['-----BEGIN RSA PRIVATE KEY-----', true],
    ['xoxb-1234567890-abc', true],
    ['postgres://db:5432/app', false],
    ['sk_live_short', false],
  ];
  for (const [value, secret] of rows) t.is(looksLikeSecretValue(value), secret, value);
});

// ---------------------------------------------------------------------------------------------
// Variables

test('expandVariables: known values, defaults, alternatives, unknown variables kept', (t) => {
  const vars = new Map([
    ['HOST', 'db'],
    ['EMPTY', ''],
  ]);
  const lookup = (n: string) => vars.get(n);
  const rows: [string, string][] = [
    ['$HOST:5432', 'db:5432'],
    ['${HOST}', 'db'],
    ['${MISSING}', '${MISSING}'],
    ['$MISSING', '$MISSING'],
    ['${MISSING:-x}', 'x'],
    ['${MISSING-x}', 'x'],
    ['${EMPTY:-x}', 'x'],
    ['${EMPTY-x}', ''],
    ['${HOST:+set}', 'set'],
    ['${MISSING:+set}', ''],
    ['${EMPTY:+set}', ''],
    ['${EMPTY+set}', 'set'],
    ['${MISSING:?required}', '${MISSING:?required}'],
    ['${HOST:?required}', 'db'],
    ['${MISSING:-${HOST}}', 'db'],
    ['$$HOST', '$$HOST'],
    ['${{ env.HOST }}', '${{ env.HOST }}'],
    ['$(HOST)', '$(HOST)'],
  ];
  for (const [value, expanded] of rows) t.is(expandVariables(value, lookup), expanded, value);
  t.is(expandVariables('$$HOST', lookup, { dollarEscape: true }), '$HOST');
});

test('isDynamic: text still holding a variable or template expression', (t) => {
  const rows: [string, boolean][] = [
    ['$X', true],
    ['a${X}', true],
    ['${{ github.sha }}', true],
    ['<< pipeline.parameters.tag >>', true],
    ['{{ .Values.tag }}', true],
    ['nginx:1.25', false],
    ['a<b', false],
  ];
  for (const [value, dynamic] of rows) t.is(isDynamic(value), dynamic, value);
});

// ---------------------------------------------------------------------------------------------
// Paths

test('paths: dirname, basename, stem', (t) => {
  const rows: [string, string, string, string][] = [
    ['a/b/c.ts', 'a/b', 'c.ts', 'c'],
    ['c.ts', '', 'c.ts', 'c'],
    ['.github/workflows/ci.yml', '.github/workflows', 'ci.yml', 'ci'],
    ['svc/Dockerfile', 'svc', 'Dockerfile', 'Dockerfile'],
    ['.env', '', '.env', '.env'],
    ['a/b.tar.gz', 'a', 'b.tar.gz', 'b.tar'],
  ];
  for (const [path, dir, base, st] of rows)
    t.deepEqual([dirname(path), basename(path), stem(path)], [dir, base, st], path);
});

test('paths: normalizeDir and normalizePath resolve `.`, `..` and `\\`; climbing out is null', (t) => {
  const rows: [string, string | null, string | null][] = [
    ['', '', null],
    ['.', '', null],
    ['./', '', null],
    ['./a.ts', 'a.ts', 'a.ts'],
    ['a/./b/', 'a/b', 'a/b'],
    ['a//b', 'a/b', 'a/b'],
    ['a\\b', 'a/b', 'a/b'],
    ['a/../b', 'b', 'b'],
    ['..', null, null],
    ['a/../../b', null, null],
  ];
  for (const [p, dir, path] of rows)
    t.deepEqual([normalizeDir(p), normalizePath(p)], [dir, path], JSON.stringify(p));
});

test('paths: joinPath, isWithin, relativeTo', (t) => {
  const joins: [string, string, string | null][] = [
    ['', 'a/b', 'a/b'],
    ['deploy', '../services/api', 'services/api'],
    ['deploy', '.', 'deploy'],
    ['a', './b/../c', 'a/c'],
    ['', '..', null],
  ];
  for (const [dir, rel, joined] of joins) t.is(joinPath(dir, rel), joined, `${dir} + ${rel}`);
  const within: [string, string, boolean][] = [
    ['a/b', '', true],
    ['a/b', 'a', true],
    ['a', 'a', true],
    ['ab/c', 'a', false],
  ];
  for (const [path, dir, inside] of within) t.is(isWithin(path, dir), inside, `${path} in ${dir}`);
  const relative: [string, string, string][] = [
    ['a/b/c', 'a', 'b/c'],
    ['a', 'a', ''],
    ['a/b', '', 'a/b'],
  ];
  for (const [path, dir, rel] of relative) t.is(relativeTo(path, dir), rel, `${path} from ${dir}`);
});

test('paths: sortByPath orders by code unit, leaving the input as it was', (t) => {
  const files = [{ path: 'b' }, { path: 'a/z' }, { path: 'B' }, { path: 'a' }];
  t.deepEqual(
    sortByPath(files).map((f) => f.path),
    ['B', 'a', 'a/z', 'b'],
  );
  t.is(files[0]?.path, 'b');
});

test('isDockerfile: Dockerfiles by name, not files about them', (t) => {
  const rows: [string, boolean][] = [
    ['Dockerfile', true],
    ['dockerfile', true],
    ['svc/Dockerfile', true],
    ['Containerfile', true],
    ['Dockerfile.prod', true],
    ['Dockerfile-dev', true],
    ['api.Dockerfile', true],
    ['api.dockerfile', true],
    // The cloud reader took these two for Dockerfiles, the code reader did not.
    ['Dockerfile.ts', false],
    ['Dockerfile.lock', false],
    // The code reader took this one, the cloud reader did not.
    ['Dockerfile.dockerignore', false],
    ['Dockerfile.md', false],
    ['Dockerfile.yaml', false],
    ['dockerfile.ts', false],
    ['Dockerfile.', false],
    ['MyDockerfile', false],
    ['docs/dockerfiles.md', false],
  ];
  for (const [path, docker] of rows) t.is(isDockerfile(path), docker, path);
});

// ---------------------------------------------------------------------------------------------
// Text and values

test('compareStrings and uniqueSorted: code-unit order, whatever the locale', (t) => {
  const rows: [string, string, number][] = [
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'a', 0],
    ['B', 'a', -1],
    ['é', 'z', 1],
  ];
  for (const [a, b, order] of rows) t.is(compareStrings(a, b), order, `${a} ${b}`);
  t.deepEqual(uniqueSorted(['b', 'a', 'b', 'B']), ['B', 'a', 'b']);
});

test('errorMessage: the first line only, at most 200 characters', (t) => {
  const rows: [unknown, string][] = [
    [new Error('bad token at line 3\n  password: hunter2'), 'bad token at line 3'],
    [new Error('x'.repeat(300)), 'x'.repeat(200)],
    ['plain', 'plain'],
    [42, '42'],
  ];
  for (const [err, message] of rows) t.is(errorMessage(err), message);
});

test('LineIndex: offsets to 1-based lines and back', (t) => {
  const idx = new LineIndex('ab\ncd\n\nef');
  const rows: [number, number][] = [
    [0, 1],
    [2, 1],
    [3, 2],
    [6, 3],
    [7, 4],
    [8, 4],
  ];
  for (const [offset, line] of rows) t.is(idx.lineAt(offset), line, `offset ${offset}`);
  t.deepEqual(
    [1, 2, 3, 4].map((l) => idx.lineStart(l)),
    [0, 3, 6, 7],
  );
  t.is(idx.lineCount, 4);
});

test('values: isRecord, asString, asArray', (t) => {
  const rows: [unknown, boolean, string | null, unknown[]][] = [
    [{ a: 1 }, true, null, []],
    [[1], false, null, [1]],
    [null, false, null, []],
    ['x', false, 'x', []],
    [3, false, '3', []],
    [true, false, 'true', []],
  ];
  for (const [v, record, str, arr] of rows)
    t.deepEqual([isRecord(v), asString(v), asArray(v)], [record, str, arr], JSON.stringify(v));
});

// ---------------------------------------------------------------------------------------------
// Evidence

const FILE: SourceFile = { path: 'svc/compose.yml', text: 'l1\nl2\nl3' };
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

test('evidence: cites the lines with their sha256; no relationship without an object', (t) => {
  const rows: [
    { start: number; end: number },
    string | null,
    [number, number, string, string | null, string | null],
  ][] = [
    [{ start: 2, end: 3 }, 'image:x', [2, 3, 'l2\nl3', 'uses_image', 'image:x']],
    [{ start: 2, end: 2 }, null, [2, 2, 'l2', null, null]],
    [{ start: 0, end: 99 }, 'image:x', [1, 3, 'l1\nl2\nl3', 'uses_image', 'image:x']],
  ];
  for (const [span, object, [start, end, cited, relationship, key]] of rows) {
    const e = evidence(FILE, span, {
      source: 'cloud',
      provider: 'docker-compose',
      kind: 'image-reference',
      subject: 'service:web',
      relationship: 'uses_image',
      object,
      summary: 'web runs x',
    });
    t.deepEqual(
      [e.location, e.content_sha256, e.relationship_kind, e.object_key],
      [{ path: FILE.path, start_line: start, end_line: end }, sha(cited), relationship, key],
    );
    t.is(e.source_type, 'cloud');
    t.deepEqual(e.attributes, {});
  }
});

test('sortOutput: by path, then line, then content; gaps by path and reason', (t) => {
  const at = (path: string, line: number, kind: string) =>
    evidence(
      { path, text: 'a\nb\nc' },
      { start: line, end: line },
      {
        source: 'cicd',
        provider: 'p',
        kind,
        subject: 'job:x',
        summary: kind,
      },
    );
  const out: AnalyzerOutput = {
    evidence: [at('b.yml', 1, 'k'), at('a.yml', 3, 'k'), at('a.yml', 1, 'z'), at('a.yml', 1, 'a')],
    gaps: [
      { path: 'b', reason: 'x', message: 'm' },
      { path: 'a', reason: 'y', message: 'm' },
      { path: 'a', reason: 'x', message: 'm' },
    ],
  };
  const sorted = sortOutput(out);
  t.deepEqual(
    sorted.evidence.map((e) => `${e.location.path}:${e.location.start_line}:${e.evidence_kind}`),
    ['a.yml:1:a', 'a.yml:1:z', 'a.yml:3:k', 'b.yml:1:k'],
  );
  t.deepEqual(
    sorted.gaps.map((g) => `${g.path}:${g.reason}`),
    ['a:x', 'a:y', 'b:x'],
  );
  t.is(out.evidence[0]?.location.path, 'b.yml', 'the input is not reordered');
});

test('keyKind and keyName split a canonical key at its first colon', (t) => {
  const rows: [string, string, string][] = [
    ['service:cart', 'service', 'cart'],
    ['image:localhost-5000-team-api', 'image', 'localhost-5000-team-api'],
    ['job:gitlab-ci/root/build', 'job', 'gitlab-ci/root/build'],
  ];
  for (const [key, kind, name] of rows) t.deepEqual([keyKind(key), keyName(key)], [kind, name]);
});

// ---------------------------------------------------------------------------------------------
// YAML

test('parseYamlMapping: one mapping document, or a gap saying why not', (t) => {
  const rows: [string, boolean, string | RegExp][] = [
    ['a: 1\n', false, 'ok'],
    ['a: [1\nb: 2\n', false, /^yaml_parse_error: YAML does not parse at line \d+: /],
    [
      '- a\n- b\n',
      false,
      'yaml_not_a_mapping: the document root is not a mapping, nothing to analyze',
    ],
    ['a: 1\n---\nb: 2\n', false, 'yaml_parse_error: expected one YAML document, found 2'],
    [
      'spec:\n  inputs: {}\n---\njob: {}\n',
      false,
      'yaml_parse_error: expected one YAML document, found 2',
    ],
    ['spec:\n  inputs: {}\n---\njob: {}\n', true, 'ok'],
  ];
  for (const [text, header, expected] of rows) {
    const parsed = parseYamlMapping({ path: 'x.yml', text }, { allowHeaderDocument: header });
    const got = parsed.ok ? 'ok' : `${parsed.gap.reason}: ${parsed.gap.message}`;
    if (typeof expected === 'string') t.is(got, expected, text);
    else t.regex(got, expected, text);
  }
  const parsed = parseYamlMapping(
    { path: 'x.yml', text: 'spec:\n  inputs: {}\n---\njob: {}\n' },
    { allowHeaderDocument: true },
  );
  t.deepEqual(parsed.ok ? parsed.y.entries(parsed.root).map((e) => e.key) : [], ['job']);
});

// The lines each view cites: a block ends at its last value, not at the comments and blank
// lines after it; a block scalar's `#` lines are its content.
const CITED = `x-env: &env
  A: 1
services:
  web:
    image: x
    env:
      <<: *env
      B: 2
      # trailing comment in env
    # trailing comment in web

  # comment before api
  api:
    run: |
      echo hi
      # done

# end
`;

test('YAML lines: blocks end at their last value; merged keys are cited at the anchor', (t) => {
  const parsed = parseYamlMapping({ path: 'c.yml', text: CITED });
  if (!parsed.ok) return t.fail(parsed.gap.message);
  const { y, root } = parsed;
  const services = y.asMap(y.get(root, 'services'));
  const web = y.asMap(y.get(services, 'web'));
  const api = y.asMap(y.get(services, 'api'));
  const env = y.asMap(y.get(web, 'env'));
  const at = (m: YAMLMap | null, key: string) => {
    const e = y.entry(m, key);
    return e ? span(y.entryLines(e)) : null;
  };
  const rows: [string, number[] | null, number[]][] = [
    ['services (node)', span(y.nodeLines(services)), [4, 16]],
    ['web', at(services, 'web'), [4, 8]],
    ['web.env', at(web, 'env'), [6, 8]],
    ['web.env.A (merged)', at(env, 'A'), [2, 2]],
    ['web.env.B', at(env, 'B'), [8, 8]],
    ['api', at(services, 'api'), [13, 16]],
    ['api.run (block scalar)', at(api, 'run'), [14, 16]],
  ];
  for (const [what, got, expected] of rows) t.deepEqual(got, expected, what);
  t.deepEqual(
    y.entries(env).map((e) => e.key),
    ['A', 'B'],
  );
});

test('parseYamlDocuments: the same lines by path; a broken document is an error, the others read', (t) => {
  const [doc] = parseYamlDocuments({ path: 'c.yml', text: CITED }).docs;
  if (!doc) return t.fail('not read');
  const rows: [(string | number)[], number[]][] = [
    [[], [1, 16]],
    [
      ['services', 'web'],
      [4, 8],
    ],
    [
      ['services', 'web', 'env', 'A'],
      [2, 2],
    ],
    [
      ['services', 'api', 'run'],
      [14, 16],
    ],
    // A missing key: the deepest path that exists.
    [
      ['services', 'db', 'image'],
      [3, 16],
    ],
  ];
  for (const [path, expected] of rows) {
    t.deepEqual(span(doc.span(path)), expected, path.join('.'));
  }
  const list = parseYamlDocuments({ path: 'l.yml', text: 'items:\n  - a\n  - b: 1\n    c: 2\n' });
  t.deepEqual(span(list.docs[0]?.span(['items', 1])), [3, 4]);

  const stream = parseYamlDocuments({ path: 's.yml', text: 'a: 1\n---\nb: 1\nb: 2\n---\nc: 3\n' });
  t.deepEqual(
    stream.docs.map((d) => [d.index, d.value]),
    [
      [0, { a: 1 }],
      [2, { c: 3 }],
    ],
  );
  t.is(stream.errors.length, 1);
  t.regex(stream.errors[0] ?? '', /^document 2: YAML does not parse at line 4: /);
});

// ---------------------------------------------------------------------------------------------
// URLs and hosts (one reading for code connection strings, cloud values and proxy targets)

test('urls: scheme, hosts, database, credentials and service-discovery forms', (t) => {
  const rows: Array<[string, string, string[], string | null, boolean, boolean, boolean]> = [
    // value, scheme, hosts, database, credentials, unresolved, discovery
    [
      'postgres://u:p@db:5432/shop?sslmode=off',
      'postgres',
      ['db:5432'],
      'shop',
      true,
      false,
      false,
    ],
    ['jdbc:postgresql://db/orders', 'postgresql', ['db'], 'orders', false, false, false],
    [
      'mongodb://u:p/x@m1:27017,m2:27018/o?rs=0',
      'mongodb',
      ['m1:27017', 'm2:27018'],
      'o',
      true,
      false,
      false,
    ],
    ['redis://${REDIS_HOST}:6379', 'redis', [], null, false, true, false],
    ['http://api:8080/v1/items.', 'http', ['api:8080'], null, false, false, false],
    ['https://user@api.example.com/x', 'https', ['api.example.com'], null, true, false, false],
    ['http://[::1]:80/', 'http', ['[::1]:80'], null, false, false, false],
    // .NET service discovery: either scheme, the first preferred; `_endpoint.` names an endpoint.
    ['https+http://catalog', 'https', ['catalog'], null, false, false, true],
    ['http+https://basket:8080/api', 'http', ['basket:8080'], null, false, false, true],
    ['http://_grpc.ordering', 'http', ['ordering'], null, false, false, true],
    [
      'https://_dashboard.aspire-dashboard:18888',
      'https',
      ['aspire-dashboard:18888'],
      null,
      false,
      false,
      true,
    ],
    // gRPC name resolution: the target is the path.
    ['dns:///payments:50051', 'dns', ['payments:50051'], null, false, false, true],
    ['dns://8.8.8.8/payments:50051', 'dns', ['payments:50051'], null, false, false, true],
    ['dns:///', 'dns', [], null, false, true, true],
  ];
  for (const [value, scheme, hosts, database, creds, unresolved, discovery] of rows) {
    const p = parseUrlValue(value);
    t.truthy(p, value);
    t.deepEqual(
      [
        p?.scheme,
        p?.hosts.map((h) => (h.port === null ? h.host : `${h.host}:${h.port}`)),
        p?.database,
        p?.hasCredentials,
        p?.unresolved,
        p?.discovery,
      ],
      [scheme, hosts, database, creds, unresolved, discovery],
      value,
    );
  }
  t.is(parseUrlValue('api:8080'), null);
  t.deepEqual(parseUrl('amqp', 'u:p@mq/vhost'), {
    scheme: 'amqp',
    hosts: [{ host: 'mq', port: null }],
    database: 'vhost',
    hasCredentials: true,
    unresolved: false,
    path: '/vhost',
    hasFragment: false,
    discovery: false,
  });
});

test('hosts: host:port, local hosts, internal names and the entity a target names', (t) => {
  const hp: Array<[string, string | null]> = [
    ['api:8080', 'api:8080'],
    ['API', 'api'],
    ['[::1]:5432', '[::1]:5432'],
    ['${HOST}', null],
    ['a b', null],
    ['', null],
  ];
  for (const [value, expected] of hp) {
    const r = parseHostPort(value);
    t.is(r === null ? null : r.port === null ? r.host : `${r.host}:${r.port}`, expected, value);
  }
  for (const host of [
    'localhost',
    'app.localhost',
    '127.0.0.2',
    '0.0.0.0',
    '[::1]',
    'host.docker.internal',
  ])
    t.true(isLocalHost(host), host);
  for (const host of ['api', 'localhost-proxy', '10.0.0.1']) t.false(isLocalHost(host), host);
  const names: Array<[string, string | null]> = [
    ['cart', 'cart'],
    ['redis.default.svc.cluster.local', 'redis'],
    ['orders.shop.svc', 'orders'],
    ['api.internal', 'api'],
    ['api.stripe.com', null],
    ['10.0.0.5', null],
  ];
  for (const [host, expected] of names) t.is(internalName(host), expected, host);
  const keys: Array<[string, string | null]> = [
    ['cart', 'service:cart'],
    ['users.prod.svc.cluster.local', 'service:users'],
    ['api.stripe.com', 'external:api.stripe.com'],
    ['localhost', null],
    ['127.0.0.1', null],
    ['10.1.2.3', null],
  ];
  for (const [host, expected] of keys) t.is(targetKeyOf(host), expected, host);
});
