// Builds the WebUI into static files the master serves at `/` (assets by relative path, so the
// same files work behind any prefix). DET_WEBUI_OUT picks the folder (scripts/build.sh: the
// build's webui/dist, which det-master finds beside its own binary).
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  esbuild: { jsx: "automatic" },
  build: {
    outDir: process.env.DET_WEBUI_OUT ?? "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1024,
  },
  test: { environment: "node", include: ["test/**/*.test.ts"], globals: true },
});
