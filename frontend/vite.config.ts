// Vite builds the app into the Python package (src/chatmem/web/dist), where the server serves it.
// Two pages: the app (index.html) and Swagger UI for /docs (docs.html), both with only external,
// hashed scripts so the server's Content-Security-Policy can forbid inline script.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: resolve(here, "../src/chatmem/web/dist"),
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      input: { app: resolve(here, "index.html"), docs: resolve(here, "docs.html") },
    },
  },
  server: {
    // `npm run dev` proxies the API to a `chatmem serve` on :8000
    proxy: { "/api": "http://127.0.0.1:8000", "/openapi.json": "http://127.0.0.1:8000" },
  },
  test: {
    environment: "jsdom",
    include: ["tests/**/*.test.ts", "tests/**/*.test.tsx"],
  },
});
