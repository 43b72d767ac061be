/**
 * Serves the web console (built by scripts/build-console.ts into dist/console) at /app/, and
 * redirects / there. Hashed files under /app/assets/ are immutable and cached for a year; every
 * other path under /app/ is the single page (index.html, never cached), which routes itself.
 * Every answer carries a strict Content-Security-Policy: scripts, styles, images and calls from
 * this origin only (Web Workers too), no inline script, no frame. Brotli or gzip copies made at build time are
 * sent to browsers that accept them. `/app/demo` opens the public demo workspace when
 * DEMO_PUBLIC_READ is on.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';
import type { Context } from 'koa';
import { findWorkspaceBySlug } from '../../db/workspaces';
import { CODE_DIR } from '../../platform/code-dir';
import { DEMO_SLUG } from '../demo-read';
import type { AppServices } from '../services';
import { messagePage } from '../sessions/render';

/** Where the build puts the console. */
export const CONSOLE_DIR = path.join(CODE_DIR, 'dist', 'console');

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  // The explorer lays large graphs out in a Web Worker (ELK's worker script, under /app/assets/).
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

const ASSET = /^\/app\/assets\/([A-Za-z0-9_.-]{1,200})$/;

function message(ctx: Context, status: number, title: string, text: string): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = messagePage(title, text);
}

function secure(ctx: Context): void {
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
}

/** Sends a file of the build, compressed when the browser accepts a copy made at build time. */
async function send(ctx: Context, file: string, cache: string): Promise<void> {
  const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  const accepts = ctx.acceptsEncodings('br', 'gzip', 'identity');
  ctx.vary('Accept-Encoding');
  let chosen = file;
  for (const [encoding, suffix] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ] as const) {
    if (accepts === encoding && fs.existsSync(file + suffix)) {
      chosen = file + suffix;
      ctx.set('Content-Encoding', encoding);
      break;
    }
  }
  ctx.status = 200;
  ctx.type = type;
  ctx.set('Cache-Control', cache);
  ctx.length = (await fs.promises.stat(chosen)).size;
  ctx.body = ctx.method === 'HEAD' ? null : fs.createReadStream(chosen);
}

export function consoleMiddleware(services: AppServices): Koa.Middleware {
  return async (ctx, next) => {
    const p = ctx.path;
    if (p !== '/' && p !== '/app' && !p.startsWith('/app/')) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    secure(ctx);
    if (p === '/' || p === '/app') return ctx.redirect('/app/');
    if (p === '/app/demo') {
      const demo = services.demoRead
        ? await findWorkspaceBySlug(services.db, DEMO_SLUG)
        : undefined;
      if (!demo)
        return message(
          ctx,
          404,
          'No public demo',
          'This installation does not offer the public demo (DEMO_PUBLIC_READ is off). Sign in instead.',
        );
      return ctx.redirect(`/app/w/${demo.id}`);
    }
    if (p.startsWith('/app/assets/')) {
      const asset = ASSET.exec(p);
      const file = asset ? path.join(CONSOLE_DIR, 'assets', asset[1]!) : null;
      if (file && !asset![1]!.includes('..') && !/\.(br|gz)$/.test(file) && fs.existsSync(file))
        return send(ctx, file, 'public, max-age=31536000, immutable');
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found';
      return;
    }
    const index = path.join(CONSOLE_DIR, 'index.html');
    if (!fs.existsSync(index))
      return message(
        ctx,
        503,
        'The console is not built',
        'Build it with `npm run build:console` (npm install and npm start do it), then reload.',
      );
    return send(ctx, index, 'no-cache');
  };
}
