/**
 * platform/archive.ts: reading uploaded tar.gz and zip archives safely. Good archives
 * give exact entries; every unsafe or oversized one is refused with its own SourceError code.
 * Archives are built in a temporary folder per test: tar.gz with tar-stream's pack (or raw
 * blocks where it cannot express the entry), zip with yazl (its bytes patched where yazl
 * refuses a malicious name). No database needed.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import yazl from 'yazl';
import {
  type ArchiveEntry,
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
  detectArchiveFormat,
  readArchive,
  scanArchive,
} from '../platform/archive';
import { SourceError } from '../domain/audits/source-error';
import { tarGz as tarGzBytes, type TarItem } from './helpers/archives';

const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Builders

async function tmpDir(t: ExecutionContext): Promise<string> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'archive-test-'));
  t.teardown(() => fs.promises.rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A tar.gz (tar-stream's pack, PAX headers for long names) written to `dir/file`. */
async function tarGz(dir: string, items: TarItem[], file = 'a.tar.gz'): Promise<string> {
  const out = path.join(dir, file);
  await fs.promises.writeFile(out, await tarGzBytes(items));
  return out;
}

/** One raw 512-byte tar header (GNU magic), for entries tar-stream's pack cannot write. */
function rawHeader(name: string, typeflag: string, size: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(name.slice(0, 100), 0, 'utf8');
  block.write('0000644\0', 100);
  block.write('0000000\0', 108);
  block.write('0000000\0', 116);
  block.write(size.toString(8).padStart(11, '0') + '\0', 124);
  block.write('00000000000\0', 136);
  block.write('        ', 148);
  block.write(typeflag, 156);
  block.write('ustar  \0', 257);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return block;
}

function padded(data: Buffer): Buffer {
  return Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

/** A tar.gz from raw blocks. */
async function rawTarGz(dir: string, blocks: Buffer[], file = 'raw.tar.gz'): Promise<string> {
  const out = path.join(dir, file);
  await fs.promises.writeFile(out, zlib.gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)])));
  return out;
}

interface ZipItem {
  name: string;
  data?: string | Buffer;
  mode?: number;
  dir?: boolean;
  compress?: boolean;
}

async function zipBytes(items: ZipItem[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const item of items) {
    if (item.dir) zip.addEmptyDirectory(item.name);
    else {
      zip.addBuffer(Buffer.from(item.data ?? ''), item.name, {
        ...(item.mode !== undefined ? { mode: item.mode } : {}),
        ...(item.compress !== undefined ? { compress: item.compress } : {}),
      });
    }
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as unknown as AsyncIterable<Buffer>)
    chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Replaces every occurrence of `from` by `to` (same length), e.g. a name yazl would refuse. */
function patch(buf: Buffer, from: string, to: string): Buffer {
  if (from.length !== to.length) throw new Error('patch must keep the length');
  const needle = Buffer.from(from);
  let found = 0;
  for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + 1)) {
    buf.write(to, i, 'latin1');
    found += 1;
  }
  if (found === 0) throw new Error(`${from} not found`);
  return buf;
}

async function zipFile(
  dir: string,
  items: ZipItem[],
  edit: (b: Buffer) => Buffer = (b) => b,
): Promise<string> {
  const out = path.join(dir, 'a.zip');
  await fs.promises.writeFile(out, edit(await zipBytes(items)));
  return out;
}

async function collect(file: string, format: 'tar.gz' | 'zip', limits = DEFAULT_ARCHIVE_LIMITS) {
  const entries: ArchiveEntry[] = [];
  const summary = await readArchive(file, format, limits, async (e) => {
    entries.push(e);
  });
  return { entries, summary };
}

async function refuses(
  t: ExecutionContext,
  run: Promise<unknown>,
  code: string,
  mentions?: string,
): Promise<SourceError> {
  const err = await t.throwsAsync<SourceError>(run, { instanceOf: SourceError });
  t.is(err?.code, code, err?.message);
  // Names appear JSON-quoted in messages.
  if (mentions !== undefined) {
    t.true(err?.message.includes(JSON.stringify(mentions).slice(1, -1)), err?.message);
  }
  return err!;
}

const limits = (over: Partial<ArchiveLimits>): ArchiveLimits => ({
  ...DEFAULT_ARCHIVE_LIMITS,
  ...over,
});

const longName = `src/${'deeply-nested-directory-name/'.repeat(4)}${'x'.repeat(60)}.ts`;
const gnuLongName = `gnu/${'g'.repeat(150)}/file.txt`;

// ---------------------------------------------------------------------------------------------
// detectArchiveFormat

test('detectArchiveFormat: gzip, zip, empty zip, anything else', (t) => {
  t.is(detectArchiveFormat(zlib.gzipSync('x')), 'tar.gz');
  t.is(detectArchiveFormat(Buffer.from('PK\x03\x04rest', 'latin1')), 'zip');
  t.is(detectArchiveFormat(Buffer.from('PK\x05\x06' + '\0'.repeat(18), 'latin1')), 'zip');
  t.is(detectArchiveFormat(Buffer.from('PK\x07\x08', 'latin1')), null);
  t.is(detectArchiveFormat(Buffer.from('hello world')), null);
  t.is(detectArchiveFormat(Buffer.from([0x1f])), null);
  t.is(detectArchiveFormat(Buffer.alloc(0)), null);
});

// ---------------------------------------------------------------------------------------------
// Good archives

test('a good tar.gz gives its files and symlinks with exact data, in order', async (t) => {
  const dir = await tmpDir(t);
  const big = randomBytes(200_000);
  const file = await tarGz(dir, [
    { name: './', type: 'directory' },
    { name: './src/', type: 'directory' },
    { name: './src/lib/', type: 'directory' },
    { name: './README.md', data: '# hello\n' },
    { name: 'src//lib/a.ts', data: 'export const a = 1;\n', mode: 0o755 },
    { name: 'src/lib/big.bin', data: big },
    { name: longName, data: 'long\n' },
    { name: 'src/empty.txt', data: '' },
    { name: 'src/link.ts', type: 'symlink', linkname: 'lib/a.ts' },
    { name: 'src/lib/up', type: 'symlink', linkname: '../../README.md' },
  ]);
  t.true(longName.length > 100);
  const { entries, summary } = await collect(file, 'tar.gz');
  t.deepEqual(
    entries.map((e) => e.path),
    [
      'README.md',
      'src/lib/a.ts',
      'src/lib/big.bin',
      longName,
      'src/empty.txt',
      'src/link.ts',
      'src/lib/up',
    ],
  );
  t.deepEqual(entries[0], {
    kind: 'file',
    path: 'README.md',
    size: 8,
    data: Buffer.from('# hello\n'),
    mode: 0o644,
  });
  t.like(entries[1], { kind: 'file', mode: 0o755, size: 20 });
  const bigEntry = entries[2];
  t.true(bigEntry?.kind === 'file' && bigEntry.data.equals(big));
  t.like(entries[3], { kind: 'file', path: longName, size: 5 });
  t.like(entries[4], { kind: 'file', size: 0 });
  t.deepEqual(entries[5], { kind: 'symlink', path: 'src/link.ts', target: 'lib/a.ts' });
  t.deepEqual(entries[6], { kind: 'symlink', path: 'src/lib/up', target: '../../README.md' });
  t.deepEqual(summary, { files: 5, symlinks: 2, bytes: 8 + 20 + 200_000 + 5, skipped: [] });
  t.deepEqual(await scanArchive(file, 'tar.gz'), summary);
});

test('GNU long names (././@LongLink) work', async (t) => {
  const dir = await tmpDir(t);
  const name = Buffer.from(gnuLongName + '\0');
  const data = Buffer.from('gnu data');
  const file = await rawTarGz(dir, [
    rawHeader('././@LongLink', 'L', name.length),
    padded(name),
    rawHeader(gnuLongName, '0', data.length),
    padded(data),
  ]);
  const { entries } = await collect(file, 'tar.gz');
  t.deepEqual(entries, [{ kind: 'file', path: gnuLongName, size: 8, data, mode: 0o644 }]);
});

test('a good zip gives its files and symlinks with exact data, in order', async (t) => {
  const dir = await tmpDir(t);
  const big = randomBytes(100_000);
  const file = await zipFile(dir, [
    { name: 'src/', dir: true },
    { name: 'src/lib/', dir: true },
    { name: 'README.md', data: '# zip\n' },
    { name: 'src/lib/a.ts', data: 'export const a = 1;\n'.repeat(50), mode: 0o100755 },
    { name: 'src/lib/stored.bin', data: big, compress: false },
    { name: longName, data: 'long\n' },
    { name: 'src/link.ts', data: 'lib/a.ts', mode: 0o120777 },
  ]);
  const { entries, summary } = await collect(file, 'zip');
  t.deepEqual(
    entries.map((e) => e.path),
    ['README.md', 'src/lib/a.ts', 'src/lib/stored.bin', longName, 'src/link.ts'],
  );
  t.deepEqual(entries[0], {
    kind: 'file',
    path: 'README.md',
    size: 6,
    data: Buffer.from('# zip\n'),
    mode: 0o664, // yazl's default
  });
  const a = entries[1];
  t.true(a?.kind === 'file' && a.data.toString() === 'export const a = 1;\n'.repeat(50));
  t.like(a, { mode: 0o755 });
  const stored = entries[2];
  t.true(stored?.kind === 'file' && stored.data.equals(big));
  t.deepEqual(entries[4], { kind: 'symlink', path: 'src/link.ts', target: 'lib/a.ts' });
  t.deepEqual(summary, { files: 4, symlinks: 1, bytes: 6 + 1000 + 100_000 + 5, skipped: [] });
  t.deepEqual(await scanArchive(file, 'zip'), summary);
});

test('an empty zip and an empty tar.gz give no entries', async (t) => {
  const dir = await tmpDir(t);
  const zip = await zipFile(dir, []);
  t.deepEqual((await collect(zip, 'zip')).summary, {
    files: 0,
    symlinks: 0,
    bytes: 0,
    skipped: [],
  });
  const tgz = await tarGz(dir, []);
  t.deepEqual((await collect(tgz, 'tar.gz')).entries, []);
});

test('an error thrown by the callback comes back unchanged', async (t) => {
  const dir = await tmpDir(t);
  const file = await tarGz(dir, [
    { name: 'a', data: 'a' },
    { name: 'b', data: 'b' },
  ]);
  const boom = new Error('blob store down');
  const err = await t.throwsAsync(
    readArchive(file, 'tar.gz', DEFAULT_ARCHIVE_LIMITS, async () => {
      throw boom;
    }),
  );
  t.is(err, boom);
  const zip = await zipFile(dir, [{ name: 'a', data: 'a' }]);
  const zipErr = await t.throwsAsync(
    readArchive(zip, 'zip', DEFAULT_ARCHIVE_LIMITS, async () => {
      throw boom;
    }),
  );
  t.is(zipErr, boom);
});

// ---------------------------------------------------------------------------------------------
// Names

test('tar: a ../ entry is archive_path_traversal', async (t) => {
  const dir = await tmpDir(t);
  for (const name of ['../evil.sh', 'src/../../evil.sh', 'src\\..\\..\\evil.sh']) {
    const file = await tarGz(dir, [
      { name: 'ok.txt', data: 'ok' },
      { name, data: 'x' },
    ]);
    await refuses(t, scanArchive(file, 'tar.gz'), 'archive_path_traversal', name);
  }
});

test('zip: a ../ entry is archive_path_traversal', async (t) => {
  const dir = await tmpDir(t);
  const file = await zipFile(dir, [{ name: 'AA/evil.sh', data: 'x' }], (b) =>
    patch(b, 'AA/evil.sh', '../evil.sh'),
  );
  await refuses(t, scanArchive(file, 'zip'), 'archive_path_traversal', '../evil.sh');
  const backslash = await zipFile(dir, [{ name: 'a/BB/evil.sh', data: 'x' }], (b) =>
    patch(b, 'a/BB/evil.sh', 'a\\..\\evil.sh'),
  );
  await refuses(t, scanArchive(backslash, 'zip'), 'archive_path_traversal', 'evil.sh');
});

test('tar: an absolute path is archive_absolute_path', async (t) => {
  const dir = await tmpDir(t);
  for (const name of ['/etc/passwd', 'C:/Windows/x.dll', 'c:x', '\\server\\share']) {
    const file = await tarGz(dir, [{ name, data: 'x' }]);
    await refuses(t, scanArchive(file, 'tar.gz'), 'archive_absolute_path');
  }
});

test('zip: an absolute path is archive_absolute_path', async (t) => {
  const dir = await tmpDir(t);
  const file = await zipFile(dir, [{ name: 'Xetc/passwd', data: 'x' }], (b) =>
    patch(b, 'Xetc/passwd', '/etc/passwd'),
  );
  await refuses(t, scanArchive(file, 'zip'), 'archive_absolute_path', '/etc/passwd');
  const drive = await zipFile(dir, [{ name: 'XXWindows/x.dll', data: 'x' }], (b) =>
    patch(b, 'XXWindows/x.dll', 'C:Windows/x.dll'),
  );
  await refuses(t, scanArchive(drive, 'zip'), 'archive_absolute_path', 'x.dll');
});

test('a duplicate path is archive_duplicate_path (tar and zip)', async (t) => {
  const dir = await tmpDir(t);
  const file = await tarGz(dir, [
    { name: 'src/a.ts', data: 'one' },
    { name: './src//a.ts', data: 'two' },
  ]);
  const calls: string[] = [];
  await refuses(
    t,
    readArchive(file, 'tar.gz', DEFAULT_ARCHIVE_LIMITS, async (e) => {
      calls.push(e.path);
    }),
    'archive_duplicate_path',
    'src/a.ts',
  );
  t.deepEqual(calls, ['src/a.ts']);
  const zip = await zipFile(dir, [
    { name: 'a.ts', data: 'one' },
    { name: 'a.ts', data: 'two' },
  ]);
  await refuses(t, scanArchive(zip, 'zip'), 'archive_duplicate_path', 'a.ts');
  // A path that is a file and also holds entries.
  const both = await tarGz(dir, [
    { name: 'x/y', data: '1' },
    { name: 'x', data: '2' },
  ]);
  await refuses(t, scanArchive(both, 'tar.gz'), 'archive_duplicate_path', 'x/y');
});

// ---------------------------------------------------------------------------------------------
// Links

test('tar: symlinks to /etc/passwd or ../../x are archive_link_outside_root', async (t) => {
  const dir = await tmpDir(t);
  for (const [name, linkname] of [
    ['passwd', '/etc/passwd'],
    ['src/up', '../../x'],
    ['deep/er/up', 'a/../../../x'],
    ['win', 'C:\\Windows'],
    ['chain', 'self/..'], // 'self' -> '.' would make this the root's parent
  ] as const) {
    const file = await tarGz(dir, [
      { name: 'self', type: 'symlink', linkname: '.' },
      { name, type: 'symlink', linkname },
    ]);
    await refuses(t, scanArchive(file, 'tar.gz'), 'archive_link_outside_root', linkname);
  }
});

test('zip: symlinks to /etc/passwd or ../../x are archive_link_outside_root', async (t) => {
  const dir = await tmpDir(t);
  for (const target of ['/etc/passwd', '../../x']) {
    const file = await zipFile(dir, [{ name: 'src/link', data: target, mode: 0o120777 }]);
    await refuses(t, scanArchive(file, 'zip'), 'archive_link_outside_root', target);
  }
});

test('an entry beneath a symlink is archive_path_traversal, in either order', async (t) => {
  const dir = await tmpDir(t);
  const linkFirst = await tarGz(dir, [
    { name: 'sub/', type: 'directory' },
    { name: 'd', type: 'symlink', linkname: 'sub' },
    { name: 'd/x', data: 'through the link' },
  ]);
  await refuses(t, scanArchive(linkFirst, 'tar.gz'), 'archive_path_traversal', 'd/x');
  const linkLast = await tarGz(dir, [
    { name: 'd/x', data: 'before the link' },
    { name: 'd', type: 'symlink', linkname: 'sub' },
  ]);
  await refuses(t, scanArchive(linkLast, 'tar.gz'), 'archive_path_traversal', 'd/x');
  const zip = await zipFile(dir, [
    { name: 'd', data: 'sub', mode: 0o120777 },
    { name: 'd/x', data: 'through the link' },
  ]);
  await refuses(t, scanArchive(zip, 'zip'), 'archive_path_traversal', 'd/x');
});

test('tar: hard links outside the root are refused, inside it are unsupported', async (t) => {
  const dir = await tmpDir(t);
  for (const linkname of ['../../etc/passwd', '/etc/passwd']) {
    const out = await tarGz(dir, [{ name: 'h', type: 'link', linkname }]);
    await refuses(t, scanArchive(out, 'tar.gz'), 'archive_link_outside_root', linkname);
  }
  const inside = await tarGz(dir, [
    { name: 'a.txt', data: 'a' },
    { name: 'b.txt', type: 'link', linkname: 'a.txt' },
  ]);
  const err = await refuses(t, scanArchive(inside, 'tar.gz'), 'archive_unsupported_entry', 'b.txt');
  t.regex(err.message, /hard link/);
});

// ---------------------------------------------------------------------------------------------
// Special entries

test('tar: fifos, devices and unknown types are archive_unsupported_entry', async (t) => {
  const dir = await tmpDir(t);
  const fifo = await tarGz(dir, [{ name: 'pipe', type: 'fifo' }]);
  const e1 = await refuses(t, scanArchive(fifo, 'tar.gz'), 'archive_unsupported_entry', 'pipe');
  t.regex(e1.message, /fifo/);
  const dev = await tarGz(dir, [{ name: 'dev/null', type: 'character-device' }]);
  const e2 = await refuses(t, scanArchive(dev, 'tar.gz'), 'archive_unsupported_entry', 'dev/null');
  t.regex(e2.message, /character-device/);
  const sparse = await rawTarGz(dir, [rawHeader('sparse.img', 'S', 0)]);
  await refuses(t, scanArchive(sparse, 'tar.gz'), 'archive_unsupported_entry', 'sparse.img');
});

test('zip: a fifo by unix mode is archive_unsupported_entry', async (t) => {
  const dir = await tmpDir(t);
  const file = await zipFile(dir, [{ name: 'pipe', data: '', mode: 0o010644 }]);
  const err = await refuses(t, scanArchive(file, 'zip'), 'archive_unsupported_entry', 'pipe');
  t.regex(err.message, /fifo/);
});

// ---------------------------------------------------------------------------------------------
// Limits

test('too many files is archive_too_many_files', async (t) => {
  const dir = await tmpDir(t);
  const items = [
    { name: 'a', data: 'a' },
    { name: 'b', data: 'b' },
    { name: 'c', type: 'symlink' as const, linkname: 'a' },
  ];
  const tgz = await tarGz(dir, items);
  await refuses(t, scanArchive(tgz, 'tar.gz', limits({ maxFiles: 2 })), 'archive_too_many_files');
  t.like(await scanArchive(tgz, 'tar.gz', limits({ maxFiles: 3 })), { files: 2, symlinks: 1 });
  const zip = await zipFile(dir, [
    { name: 'a', data: 'a' },
    { name: 'b', data: 'b' },
    { name: 'c', data: 'c' },
  ]);
  const err = await refuses(
    t,
    scanArchive(zip, 'zip', limits({ maxFiles: 2 })),
    'archive_too_many_files',
  );
  t.regex(err.message, /"c"/);
  t.regex(err.message, /\b2\b/);
});

test('a total over maxUnpackedBytes is archive_too_large', async (t) => {
  const dir = await tmpDir(t);
  const items = ['a', 'b', 'c'].map((name) => ({ name, data: randomBytes(4000) }));
  const small = limits({ maxUnpackedBytes: 10_000 });
  const tgz = await tarGz(dir, items);
  const err = await refuses(t, scanArchive(tgz, 'tar.gz', small), 'archive_too_large');
  t.regex(err.message, /"c"/);
  t.regex(err.message, /10000/);
  const zip = await zipFile(dir, items);
  const zipErr = await refuses(t, scanArchive(zip, 'zip', small), 'archive_too_large');
  t.regex(zipErr.message, /"c"/);
});

test('one file over maxFileBytes is archive_too_large', async (t) => {
  const dir = await tmpDir(t);
  const items = [
    { name: 'small', data: 'x' },
    { name: 'big.bin', data: randomBytes(5000) },
  ];
  const small = limits({ maxFileBytes: 4096 });
  const tgz = await tarGz(dir, items);
  const calls: string[] = [];
  const err = await refuses(
    t,
    readArchive(tgz, 'tar.gz', small, async (e) => {
      calls.push(e.path);
    }),
    'archive_too_large',
    'big.bin',
  );
  t.regex(err.message, /4096/);
  t.deepEqual(calls, ['small']);
  const zip = await zipFile(dir, items);
  await refuses(t, scanArchive(zip, 'zip', small), 'archive_too_large', 'big.bin');
});

test.serial('a tar.gz bomb is refused early with archive_ratio_exceeded', async (t) => {
  const dir = await tmpDir(t);
  const file = await tarGz(dir, [{ name: 'bomb.bin', data: Buffer.alloc(50 * MiB) }]);
  const archiveBytes = (await fs.promises.stat(file)).size;
  t.true(archiveBytes < 200_000, `archive is ${archiveBytes} bytes`);
  let called = 0;
  const started = Date.now();
  const err = await refuses(
    t,
    readArchive(file, 'tar.gz', limits({ maxRatio: 100 }), async () => {
      called += 1;
    }),
    'archive_ratio_exceeded',
    'bomb.bin',
  );
  const elapsed = Date.now() - started;
  t.is(called, 0);
  t.true(elapsed < 3000, `took ${elapsed} ms`);
  // Stopped within one zlib chunk of the limit, far from the 50 MiB inside.
  const limit = 100 * archiveBytes;
  t.is(err.details.limit, limit);
  t.true((err.details.inflated as number) <= limit + 64 * 1024, String(err.details.inflated));
});

test.serial('a zip bomb is refused early with archive_ratio_exceeded', async (t) => {
  const dir = await tmpDir(t);
  const file = await zipFile(dir, [{ name: 'bomb.bin', data: Buffer.alloc(50 * MiB) }]);
  const archiveBytes = (await fs.promises.stat(file)).size;
  const started = Date.now();
  const err = await refuses(
    t,
    scanArchive(file, 'zip', limits({ maxRatio: 100 })),
    'archive_ratio_exceeded',
    'bomb.bin',
  );
  t.true(Date.now() - started < 3000);
  t.true((err.details.inflated as number) <= 100 * archiveBytes + 64 * 1024);
});

test('a zip whose header understates a size does not get past the limits', async (t) => {
  const dir = await tmpDir(t);
  const bytes = await zipBytes([{ name: 'liar.bin', data: Buffer.alloc(2 * MiB, 'a') }]);
  // Central directory record: uncompressed size at offset 24.
  const cd = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  bytes.writeUInt32LE(1000, cd + 24);
  const file = path.join(dir, 'liar.zip');
  await fs.promises.writeFile(file, bytes);
  const err = await t.throwsAsync<SourceError>(
    scanArchive(file, 'zip', limits({ maxFileBytes: 64 * 1024 })),
    { instanceOf: SourceError },
  );
  t.true(['archive_corrupt', 'archive_too_large'].includes(err!.code), err?.code);
});

// ---------------------------------------------------------------------------------------------
// Corrupt archives

test('a truncated tar.gz is archive_corrupt', async (t) => {
  const dir = await tmpDir(t);
  const file = await tarGz(dir, [{ name: 'a.bin', data: randomBytes(100_000) }]);
  const bytes = await fs.promises.readFile(file);
  await fs.promises.writeFile(file, bytes.subarray(0, bytes.length >> 1));
  await refuses(t, scanArchive(file, 'tar.gz'), 'archive_corrupt');
  // A complete gzip of a truncated tar.
  const tar = zlib.gunzipSync(bytes).subarray(0, 50_000);
  await fs.promises.writeFile(file, zlib.gzipSync(tar));
  await refuses(t, scanArchive(file, 'tar.gz'), 'archive_corrupt');
});

test('random bytes are archive_corrupt as zip, as tar.gz and as gzip of non-tar', async (t) => {
  const dir = await tmpDir(t);
  const file = path.join(dir, 'random');
  await fs.promises.writeFile(file, randomBytes(8192));
  await refuses(t, scanArchive(file, 'zip'), 'archive_corrupt');
  await refuses(t, scanArchive(file, 'tar.gz'), 'archive_corrupt');
  await fs.promises.writeFile(file, zlib.gzipSync(randomBytes(8192)));
  await refuses(t, scanArchive(file, 'tar.gz'), 'archive_corrupt');
  await fs.promises.writeFile(file, Buffer.alloc(0));
  await refuses(t, scanArchive(file, 'zip'), 'archive_corrupt');
  await refuses(t, scanArchive(file, 'tar.gz'), 'archive_corrupt');
});

test('a truncated zip or one with a bad CRC is archive_corrupt', async (t) => {
  const dir = await tmpDir(t);
  const bytes = await zipBytes([{ name: 'a.txt', data: 'hello world', compress: false }]);
  const truncated = path.join(dir, 'truncated.zip');
  await fs.promises.writeFile(truncated, bytes.subarray(0, bytes.length - 10));
  await refuses(t, scanArchive(truncated, 'zip'), 'archive_corrupt');
  const badCrc = path.join(dir, 'crc.zip');
  await fs.promises.writeFile(badCrc, patch(Buffer.from(bytes), 'hello world', 'hello w0rld'));
  await refuses(t, scanArchive(badCrc, 'zip'), 'archive_corrupt', 'a.txt');
});

test('refusals leave no archive file open', async (t) => {
  const dir = await tmpDir(t);
  const file = await tarGz(dir, [
    { name: 'a', data: randomBytes(300_000) },
    { name: '../b', data: 'x' },
  ]);
  const zip = await zipFile(dir, [{ name: 'a', data: randomBytes(300_000) }]);
  for (let i = 0; i < 20; i++) {
    await refuses(t, scanArchive(file, 'tar.gz'), 'archive_path_traversal');
    await refuses(
      t,
      scanArchive(zip, 'zip', limits({ maxUnpackedBytes: 1000 })),
      'archive_too_large',
    );
  }
  // No archive left open (Linux: /proc/self/fd), once pending closes have run.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const fds = await fs.promises.readdir('/proc/self/fd').catch(() => [] as string[]);
  const targets = await Promise.all(
    fds.map((fd) => fs.promises.readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  t.deepEqual(
    targets.filter((target) => target.startsWith(dir)),
    [],
  );
});
