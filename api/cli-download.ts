/**
 * `GET /cli/archaudit-cli.tgz`: the CLI package this server was built with (`npm run build:cli`,
 * done in the Docker image), outside `/v1` and the contract like the probes. CI installs it with
 * `npm install -g "$ARCHAUDIT_URL/cli/archaudit-cli.tgz"`: the client always matches the server,
 * and nothing is asked of a public registry where anyone could publish a package of that name.
 * Public (it holds no secret); 404 with a hint when the package was not built.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { CODE_DIR } from '../platform/code-dir';

export const CLI_DOWNLOAD_PATH = '/cli/archaudit-cli.tgz';
const TARBALL = path.join(CODE_DIR, 'dist', 'archaudit-cli.tgz');

/** Answers `req` when it asks for the CLI package; false leaves it to the application. */
export function answerCliDownload(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if ((req.url ?? '').split('?')[0] !== CLI_DOWNLOAD_PATH) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end();
    return true;
  }
  fs.stat(TARBALL, (err, stat) => {
    if (err || !stat.isFile()) {
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('The CLI package was not built on this server: run `npm run build:cli`.\n');
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/gzip',
      'Content-Length': stat.size,
      'Cache-Control': 'no-cache',
    });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(TARBALL).pipe(res);
  });
  return true;
}
