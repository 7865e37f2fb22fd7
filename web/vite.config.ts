import { defineConfig } from 'vite';

// The build output is embedded into the perfscape binary (crates/perfscape-server/build.rs
// passes --outDir). Asset names are content-hashed so the server can cache them forever.
export default defineConfig({
  base: '/',
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 4000,
    sourcemap: false,
  },
});
