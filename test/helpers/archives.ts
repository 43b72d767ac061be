/**
 * Archive bytes for tests, built in memory: tar.gz with tar-stream's pack, zip with yazl (its
 * bytes patched where yazl refuses a malicious name). The same techniques as
 * test/archive.test.ts, returning Buffers ready to send as a request body.
 */
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { pack } from 'tar-stream';
import yazl from 'yazl';

export const MiB = 1024 * 1024;

export interface TarItem {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'fifo' | 'character-device';
  data?: string | Buffer;
  linkname?: string;
  mode?: number;
}

async function collect(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Pipes a tar-stream pack through gzip into one Buffer. */
async function gzipped(p: ReturnType<typeof pack>, level = 9): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(
    p,
    zlib.createGzip({ level }),
    new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(chunks);
}

/** A tar.gz of the given entries. */
export async function tarGz(items: TarItem[]): Promise<Buffer> {
  const p = pack();
  for (const item of items) {
    const data = item.data === undefined ? undefined : Buffer.from(item.data);
    const header = {
      name: item.name,
      type: item.type ?? 'file',
      mode: item.mode ?? (item.type === 'directory' ? 0o755 : 0o644),
      ...(item.linkname !== undefined ? { linkname: item.linkname } : {}),
      ...(data ? { size: data.length } : {}),
    };
    if (data) p.entry(header, data);
    else p.entry(header);
  }
  p.finalize();
  return gzipped(p);
}

/** A tar.gz of `count` empty files (f/000000.txt, ...): small, but many entries. */
export async function manyFilesTarGz(count: number): Promise<Buffer> {
  const p = pack();
  const done = gzipped(p, 6);
  const empty = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    p.entry({ name: `f/${String(i).padStart(6, '0')}.txt`, type: 'file', mode: 0o644 }, empty);
  }
  p.finalize();
  return done;
}

/**
 * A tar.gz holding one file of `size` zero bytes, streamed into the packer in 1 MiB chunks so the
 * decompressed data is never held in memory (only the tiny compressed output is).
 */
export async function zerosTarGz(name: string, size: number): Promise<Buffer> {
  const p = pack();
  const done = gzipped(p, 9);
  const chunk = Buffer.alloc(MiB);
  await new Promise<void>((resolve, reject) => {
    const entry = p.entry({ name, type: 'file', mode: 0o644, size }, (err) =>
      err ? reject(err) : resolve(),
    );
    let left = size;
    const writeMore = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        const ok = entry.write(n === chunk.length ? chunk : chunk.subarray(0, n));
        if (!ok && left > 0) {
          entry.once('drain', writeMore);
          return;
        }
      }
      entry.end(() => undefined);
    };
    writeMore();
  });
  p.finalize();
  return done;
}

export interface ZipItem {
  name: string;
  data?: string | Buffer;
  mode?: number;
  dir?: boolean;
  compress?: boolean;
}

export async function zipBytes(items: ZipItem[]): Promise<Buffer> {
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
  return collect(zip.outputStream as unknown as AsyncIterable<Buffer>);
}

/** Replaces every occurrence of `from` by `to` (same length), e.g. a name yazl would refuse. */
export function patch(buf: Buffer, from: string, to: string): Buffer {
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

export function sha256(data: Buffer | string): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}
