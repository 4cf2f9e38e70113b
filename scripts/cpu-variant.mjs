// Prints the CPU kernel variant of ggml that node-llama-cpp's in-process backend loads on this machine
// (e.g. "haswell", "sapphirerapids"; the libggml-cpu-<variant>.so its backend registry picked by the
// CPU's features), or nothing when its build has a single CPU backend. scripts/build-llama-server.sh
// builds llama-server with exactly that variant's instruction sets, so the server computes the same
// logits as the in-process backend (README "Inference servers").
import { readFileSync } from "node:fs";
import { getLlama } from "node-llama-cpp";

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const loaded = readFileSync("/proc/self/maps", "utf8")
  .split("\n")
  .map((line) => /libggml-cpu-([A-Za-z0-9_.]+)\.so/.exec(line)?.[1])
  .filter((v) => v !== undefined);
const variants = [...new Set(loaded)];
if (variants.length > 1) {
  console.error(`cpu-variant: node-llama-cpp loaded several CPU variants (${variants.join(", ")})`);
  process.exit(1);
}
if (variants.length === 1) console.log(variants[0]);
await llama.dispose();
