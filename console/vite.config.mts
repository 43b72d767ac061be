/**
 * The console's build: hashed files under /app/assets/, no inline script (the API serves them
 * with a strict Content-Security-Policy), no source maps in the served folder.
 */
import path from 'node:path';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: path.resolve(import.meta.dirname, '..', 'dist', 'console'),
    emptyOutDir: true,
    // No module-preload polyfill: it is an inline script, which the CSP refuses.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
  },
});
