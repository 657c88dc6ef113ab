/// <reference types="vitest/config" />
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// One origin in production: FastAPI serves dist/ and /api. In development the
// Vite server forwards /api to the backend so cookies stay same-origin.
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", sourcemap: true },
  server: {
    proxy: { "/api": { target: "http://127.0.0.1:8000", changeOrigin: false } },
    // The SSE transcript the decoder tests read is shared with the backend tests.
    fs: { allow: [".", "../tests/fixtures/sse"] },
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test/setup.ts"],
    restoreMocks: true,
    // Above the 5 s a findBy may wait (src/test/setup.ts), so a slow first render fails on its own line.
    testTimeout: 15000,
  },
});
