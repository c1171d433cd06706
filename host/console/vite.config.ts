import { defineConfig } from 'vitest/config';

// The console is built with Vite's own esbuild (no React plugin: it breaks
// with older npm); JSX uses the automatic runtime. The output is committed
// and embedded in palyra-host, so it must be the same bytes on every build:
// content-hashed names, no source maps, no inline assets that depend on the
// machine.
export default defineConfig({
  base: '/',
  esbuild: { jsx: 'automatic', legalComments: 'none' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/[name]-[hash].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    environment: 'node',
  },
});
