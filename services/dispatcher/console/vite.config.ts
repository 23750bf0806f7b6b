import { defineConfig } from 'vite';

// The dispatcher serves the built console from its classpath at /console/ (ConsolePages): Maven runs
// this build in generate-resources, straight into target/classes.
export default defineConfig({
  base: '/console/',
  build: {
    outDir: '../target/classes/static/console',
    emptyOutDir: true,
    // No inline scripts or styles: the Content-Security-Policy allows only 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: { '/v1': 'http://127.0.0.1:8080' },
  },
});
