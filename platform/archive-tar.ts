/** tar.gz reading for platform/archive.ts: the rules are the Walker's (archive-walker.ts). */
import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { extract as tarExtract, type Header as TarHeader } from 'tar-stream';
import {
  isAbsolute,
  normalisePath,
  outsideRoot,
  q,
  settle,
  unsupported,
  type Walker,
} from './archive-walker';

// ---------------------------------------------------------------------------------------------
// tar.gz: file -> gunzip -> meter (ratio) -> tar-stream extract, entries pulled one at a time.

export async function readTarGz(file: string, walker: Walker): Promise<void> {
  const meter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        walker.inflate(chunk.length);
      } catch (err) {
        callback(err as Error);
        return;
      }
      callback(null, chunk);
    },
  });
  const extract = tarExtract();
  // The pipeline destroys every stream on the first error. Its rejection is caught at once (not
  // only when awaited below), so that it can never count as an unhandled rejection.
  const piping: Promise<unknown> = pipeline(
    createReadStream(file),
    zlib.createGunzip(),
    meter,
    extract,
  ).then(
    () => undefined,
    (err: unknown) => err ?? new Error('tar stream failed'),
  );
  let failure: unknown;
  try {
    for await (const entry of extract) {
      // tar-stream's entry streams are streamx Readables, which yield the Buffers of the data.
      await tarEntry(
        walker,
        entry.header,
        entry as AsyncIterable<unknown> as AsyncIterable<Buffer>,
      );
      walker.current = '';
    }
  } catch (err) {
    failure = err ?? new Error('tar extraction failed');
    extract.destroy();
  }
  const pipeFailure = await piping;
  if (failure !== undefined || pipeFailure !== undefined)
    settle(walker.current, failure, pipeFailure);
}

async function drain(stream: AsyncIterable<Buffer>): Promise<void> {
  // Discarded: the ratio meter upstream has counted it.
  for await (const chunk of stream) void chunk;
}

async function tarEntry(walker: Walker, header: TarHeader, data: AsyncIterable<Buffer>) {
  walker.current = header.name;
  const path = normalisePath(header.name);
  walker.current = path;
  // At run time tar-stream gives a null type for typeflags it does not know, and may give
  // null or undefined fields where its types say otherwise.
  const type: string = (header.type as string | null) ?? 'unknown';
  switch (type) {
    case 'directory':
      return drain(data);
    case 'file':
    case 'contiguous-file':
      // Old tars mark directories with a trailing slash on a regular-file header.
      if (header.name.endsWith('/') || header.name.endsWith('\\')) return drain(data);
      return walker.file(path, (header.mode ?? 0o644) & 0o7777, header.size ?? 0, data);
    case 'symlink':
      await drain(data);
      return walker.symlink(path, (header.linkname as string | null) ?? '');
    case 'link': {
      const target = (header.linkname as string | null) ?? '';
      const slashed = target.replace(/\\/g, '/');
      if (isAbsolute(slashed)) throw outsideRoot(path, target, 'hard link', 'is absolute');
      // A hard link's target is a path from the archive root, not from the link's directory.
      const resolved = posix.normalize(slashed);
      if (resolved === '..' || resolved.startsWith('../')) {
        throw outsideRoot(path, target, 'hard link', 'resolves outside the root');
      }
      throw unsupported(
        path,
        'hard link',
        ` (target ${q(target)}; re-create the archive with tar --hard-dereference)`,
      );
    }
    default:
      // character-device, block-device, fifo, and types tar-stream does not know (GNU sparse
      // files, volume labels, dump directories...).
      throw unsupported(path, type === 'unknown' ? 'tar entry of an unknown type' : type);
  }
}
