// A hook that embeds without `memory.embedsNotes` (issue 39 #11): runs load no embedder for it, so
// it used to fail in its first episode, after the initial cache was built. The declaration is
// checked when the method is registered — and so by `merit study plan`, which loads the study's
// plugins — in one line naming the method, the hook and the fix.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { planStudy } from "../../lib/analysis/study-plan.ts";
import { registerMethod, topByCosine } from "../../lib/methods/index.ts";

const tmp = mkdtempSync(join(tmpdir(), "merit-embeds-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("embedding without embedsNotes", () => {
  it("is refused at registration: model.embed in retrieve, topByCosine, a note's vector, embed in a step hook", () => {
    const memory = (retrieve: (...a: never[]) => unknown) => ({ name: "m", heading: "H", write: () => [], retrieve }) as never;
    expect(() => registerMethod({ name: "t_embed_missing", description: "x", hooks: { memory: memory(async (r: { question: string }, notes: never, model: { embed(t: string[]): Promise<Float32Array[]> }) => { await model.embed([r.question]); return []; }) } })).toThrow(
      /^method "t_embed_missing": memory\.retrieve calls model\.embed\(…\), but memory\.embedsNotes is not set, so runs load no embedder \(and notes carry no vector\); set memory\.embedsNotes: true$/,
    );
    expect(() => registerMethod({ name: "t_cosine_missing", description: "x", hooks: { memory: memory((_r: never, notes: never) => topByCosine(notes, new Float32Array(1), 2)) } })).toThrow(/memory\.retrieve ranks by topByCosine\(…\)/);
    expect(() => registerMethod({ name: "t_vector_missing", description: "x", hooks: { memory: memory((_r: never, notes: { vector: unknown }[]) => notes.filter((n) => n.vector !== null).map((note) => ({ note }))) } })).toThrow(/memory\.retrieve reads notes' vectors/);
    expect(() => registerMethod({ name: "t_step_embed", description: "x", hooks: { calls: { critic: { most: 2 } }, step: { name: "s", afterFailure: async (_s: never, model: { embed(t: string[]): Promise<unknown> }) => (await model.embed(["x"]), null) } } as never })).toThrow(/step\.afterFailure calls model\.embed\(…\), but only a memory hook with embedsNotes: true/);
    // with embedsNotes the same hook registers
    expect(() => registerMethod({ name: "t_embed_set", description: "x", hooks: { memory: { ...(memory((_r: never, notes: never) => topByCosine(notes, new Float32Array(1), 2)) as object), embedsNotes: true } as never } })).not.toThrow();
  });

  it("merit study plan refuses a study whose plugin embeds without it, before any compute", async () => {
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    const lib = (p: string) => JSON.stringify(pathToFileURL(join(process.cwd(), "lib", p)).href);
    writeFileSync(join(tmp, "plugin.ts"), `import { registerMethod } from ${lib("plugin.ts")};\nregisterMethod({ name: "t_plan_embed", description: "x", hooks: { memory: { name: "m", heading: "H", write: () => [], async retrieve(r, notes, model) { await model.embed([r.question]); return []; } } } });\n`);
    writeFileSync(join(tmp, "study.ts"), `import { defineStudy } from ${lib("experiment/study.ts")};\nexport default defineStudy({ name: "embeds", methods: ["merit", "t_plan_embed"], reference: "merit", queries: 2, plugins: ["./plugin.ts"] });\n`);
    await expect(planStudy(join(tmp, "study.ts"), { runs: join(tmp, "runs") })).rejects.toThrow(/plugin\.ts"?: method "t_plan_embed": memory\.retrieve calls model\.embed\(…\), but memory\.embedsNotes is not set/);
  });
});
