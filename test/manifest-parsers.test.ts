/**
 * The TOML and XML readers of the manifest analyzer (analysis/code/toml.ts over
 * toml-eslint-parser, analysis/code/xml.ts over sax): the lines evidence cites, and what is kept
 * of a broken manifest (the reader recovers, records the problem and never throws).
 */
import test from 'ava';
import { analyzeCode } from '../analysis/code';
import { readToml } from '../analysis/code/toml';
import { readXml } from '../analysis/code/xml';

const lines = (...l: string[]): string => l.join('\n');

test('TOML: an unterminated multi-line array is a problem; what came before it is kept', (t) => {
  const doc = readToml(
    lines(
      '[project]', // 1
      'name = "svc"', // 2
      'dependencies = [', // 3
      '  "requests>=2",', // 4
      '  "redis",', // 5
      '', // 6
      '[tool.x]', // 7
      'y = "read into the array"', // 8
    ),
  );
  // The parser reads the header and what follows as items of the open array: the statement
  // from line 3 on is lost (as with any reader), the rest is kept and the problem recorded.
  t.deepEqual(
    doc.assignments.map((a) => `${a.path.join('.')}@${a.line}`),
    ['project.name@2'],
  );
  t.deepEqual(
    doc.headers.map((h) => h.path.join('.')),
    ['project'],
  );
  t.true(doc.errors.length >= 1);
  t.true(doc.errors.every((e) => e.line >= 3 && e.line <= 9));
});

test('TOML: an unterminated array at the end of the file keeps what came before', (t) => {
  const doc = readToml('[project]\nname = "x"\ndependencies = ["a",\n  "b",\n');
  t.deepEqual(
    doc.assignments.map((a) => a.path.join('.')),
    ['project.name'],
  );
  t.is(doc.errors.length, 1);
});

test('TOML: a key defined twice is a problem; the first definition stands', (t) => {
  const doc = readToml('a = "1"\na = "2"\nb = "3"\n');
  t.deepEqual(
    doc.assignments.map(
      (a) => `${a.key.join('.')}=${a.value.kind === 'string' ? a.value.value : ''}`,
    ),
    ['a=1', 'b=3'],
  );
  t.deepEqual(
    doc.errors.map((e) => e.line),
    [2],
  );
});

test('TOML: multi-line strings, inline tables over lines (TOML 1.1), raw scalars', (t) => {
  const doc = readToml(
    lines(
      'desc = """', // 1
      'two', // 2
      'lines"""', // 3
      'dep = { version = "1",', // 4
      '        optional = true }', // 5
      'when = 2024-01-01', // 6
    ),
  );
  t.deepEqual(doc.errors, []);
  const [desc, dep, when] = doc.assignments;
  t.deepEqual([desc?.line, desc?.endLine], [1, 3]);
  t.deepEqual(desc?.value, { kind: 'string', value: 'two\nlines', line: 1, endLine: 3 });
  t.deepEqual([dep?.line, dep?.endLine], [4, 5]);
  t.deepEqual(
    dep?.value.kind === 'table' ? dep.value.entries.map((e) => [e.key[0], e.value.line]) : [],
    [
      ['version', 4],
      ['optional', 5],
    ],
  );
  t.deepEqual(when?.value, { kind: 'other', raw: '2024-01-01', line: 6, endLine: 6 });
});

test('TOML: hostile input (deep nesting, control characters, no text) never throws', (t) => {
  for (const text of ['a = ' + '['.repeat(100_000), 'a = "\u0000"\nb = 1', '', '\uFEFF']) {
    const doc = readToml(text);
    t.true(Array.isArray(doc.assignments));
  }
  t.deepEqual(
    readToml('a = "\u0001"\nb = "ok"').assignments.map((a) => a.key[0]),
    ['b'],
  );
});

test('XML: a start tag over several lines is cited at the line of its "<"', (t) => {
  const { root, errors } = readXml(
    lines(
      '<?xml version="1.0"?>', // 1
      '<project', // 2
      '  xmlns="http://maven.apache.org/POM/4.0.0">', // 3
      '  <dependency', // 4
      '    scope="test"', // 5
      '  />', // 6
      '  <name><![CDATA[a<b]]></name>', // 7
      '</project>', // 8
    ),
  );
  t.deepEqual(errors, []);
  t.deepEqual([root?.name, root?.line, root?.endLine], ['project', 2, 8]);
  t.deepEqual(
    root?.children.map((c) => `${c.name}@${c.line}-${c.endLine}`),
    ['dependency@4-4', 'name@7-7'],
  );
  t.is(root?.children[0]?.attrs.scope, 'test');
  t.is(root?.children[1]?.text, 'a<b');
});

test('XML: broken nesting is recorded and recovered from', (t) => {
  const { root, errors } = readXml('<a>\n<b><c></b>\n<d/>\n</a>\n</e>');
  t.true(errors.length >= 2);
  t.deepEqual(
    root?.children.map((c) => `${c.name}@${c.line}-${c.endLine}`),
    ['b@2-2', 'd@3-3'],
  );
  t.is(root?.endLine, 4);
  const open = readXml('<a>\n<b>');
  t.true(open.errors.some((e) => e.includes('unclosed element <b>')));
  t.is(open.root?.children[0]?.endLine, 2);
  t.deepEqual(readXml('not xml').root, null);
});

test('a broken pom.xml still yields its unit, and a manifest_parse_error gap', async (t) => {
  const out = await analyzeCode([
    {
      path: 'svc/pom.xml',
      text: lines(
        '<project>',
        '  <artifactId>svc</artifactId>',
        '  <dependencies>',
        '    <dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId></dependency>',
        '  </dependencies>',
        '</projekt>',
      ),
    },
  ]);
  t.true(out.gaps.some((g) => g.path === 'svc/pom.xml' && g.reason === 'manifest_parse_error'));
  t.true(
    out.evidence.some(
      (e) =>
        e.subject_key === 'service:svc' &&
        e.object_key === 'package:maven/org.postgresql:postgresql',
    ),
  );
});
