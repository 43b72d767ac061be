/** zip reading for platform/archive.ts: the rules are the Walker's (archive-walker.ts). */
import zlib from 'node:zlib';
import yauzl, { type Entry as ZipEntry, type ZipFile } from 'yauzl';
import {
  MAX_PATH_BYTES,
  corrupt,
  normalisePath,
  q,
  settle,
  unsupported,
  type Walker,
} from './archive-walker';

// ---------------------------------------------------------------------------------------------
// zip: yauzl, central directory order, one entry and one read stream at a time.

const S_IFMT = 0o170000;
const ZIP_TYPES: Record<number, string> = {
  0o010000: 'fifo',
  0o020000: 'character-device',
  0o060000: 'block-device',
  0o140000: 'socket',
};

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      file,
      {
        lazyEntries: true,
        autoClose: true,
        validateEntrySizes: true,
        strictFileNames: false,
        decodeStrings: true,
      },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

function nextZipEntry(zip: ZipFile): Promise<ZipEntry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: ZipEntry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/**
 * yauzl (decodeStrings) refuses absolute and '..' names itself, with a plain Error naming the
 * entry: turn those into our own refusals.
 */
function zipNameError(err: unknown): unknown {
  const match =
    err instanceof Error
      ? /^(?:absolute path|invalid relative path|invalid characters in fileName): ([\s\S]*)$/.exec(
          err.message,
        )
      : null;
  if (match) {
    try {
      normalisePath(match[1]!);
    } catch (refusal) {
      return refusal;
    }
  }
  return err;
}

/** The entry's inflated bytes, counted against the ratio as they come. */
async function* zipData(
  zip: ZipFile,
  entry: ZipEntry,
  walker: Walker,
): AsyncGenerator<Buffer, void, undefined> {
  const stream = await zip.openReadStreamPromise(entry);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      walker.inflate(chunk.length);
      yield chunk;
    }
  } finally {
    // Stops yauzl's read and inflate streams when we leave early (refusal or callback error).
    stream.destroy();
  }
}

export async function readZip(file: string, walker: Walker): Promise<void> {
  let zip: ZipFile;
  try {
    zip = await openZip(file);
  } catch (err) {
    settle('', err);
  }
  // yauzl emits at most one 'error'; keep a listener for the whole life of the ZipFile so that
  // none can go unhandled between two reads.
  zip.on('error', () => {});
  try {
    for (;;) {
      let entry: ZipEntry | null;
      try {
        entry = await nextZipEntry(zip);
      } catch (err) {
        throw zipNameError(err);
      }
      if (!entry) break;
      await zipEntry(zip, entry, walker);
      walker.current = '';
    }
  } catch (err) {
    settle(walker.current, err);
  } finally {
    zip.close();
  }
}

async function zipEntry(zip: ZipFile, entry: ZipEntry, walker: Walker): Promise<void> {
  const name = entry.fileName;
  walker.current = name;
  const path = normalisePath(name);
  walker.current = path;
  const unixMode = (entry.externalFileAttributes >>> 16) & 0xffff;
  const type = unixMode & S_IFMT;
  if (name.endsWith('/') || type === 0o040000) return; // a directory
  if (type !== 0 && type !== 0o100000 && type !== 0o120000) {
    throw unsupported(path, ZIP_TYPES[type] ?? `zip entry of unix type 0o${type.toString(8)}`);
  }
  if (entry.isEncrypted()) throw unsupported(path, 'encrypted zip entry');
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw unsupported(path, `zip entry compressed with method ${entry.compressionMethod}`);
  }
  if (type === 0o120000) {
    if (entry.uncompressedSize > MAX_PATH_BYTES) {
      throw unsupported(path, `symlink whose target is longer than ${MAX_PATH_BYTES} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of zipData(zip, entry, walker)) {
      size += chunk.length;
      if (size > MAX_PATH_BYTES) {
        throw unsupported(path, `symlink whose target is longer than ${MAX_PATH_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    const target = Buffer.concat(chunks, size);
    if (zlib.crc32(target) >>> 0 !== entry.crc32 >>> 0) {
      throw corrupt(`symlink ${q(path)} fails its CRC-32 check`, { path });
    }
    return walker.symlink(path, target.toString('utf8'));
  }
  const mode = unixMode & 0o7777 || 0o644;
  return walker.file(path, mode, entry.uncompressedSize, zipData(zip, entry, walker), {
    crc32: entry.crc32 >>> 0,
  });
}
