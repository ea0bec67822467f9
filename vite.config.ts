// The web console's build (docs/console.md): Preact + TypeScript from src/ui
// into dist/ui, served by dirid-server under /dirid/ui/ (src/rpc/ui-static.ts).
// No module-preload polyfill (it is an inline script, which the console's CSP forbids).
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'src/ui',
  base: '/dirid/ui/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../../dist/ui',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
