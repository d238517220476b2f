// Builds the page's bundle into ../static/ (committed, shipped in the wheel): one minified
// script with Cytoscape and dagre inside, and one stylesheet. No CDN: Airflow often runs offline.
//   cd airflow_lineage_provider/plugins/ui && npm ci && npm run build
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
// OUT_DIR: build elsewhere (the tests compare such a build with the committed bundle).
const out = process.env.OUT_DIR ? path.resolve(process.env.OUT_DIR) : path.resolve(here, "..", "static");

await build({
  entryPoints: { "column-lineage": path.join(here, "src", "main.js") },
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  outdir: out,
  legalComments: "linked",
  logLevel: "info",
});
await build({
  entryPoints: { "column-lineage": path.join(here, "src", "style.css") },
  bundle: true,
  minify: true,
  outdir: out,
  logLevel: "info",
});
