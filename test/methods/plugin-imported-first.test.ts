// A plugin file that a study file (or the study's test) imports before the kit loads it as a plugin
// (issue 39 #2): its registrations run outside the kit's import, yet they stay the plugin's, so the
// run's manifest records the plugin (and an edit of it makes the finished runs stale).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openStudy } from "../../lib/experiment/study-grid.ts";
import { loadPlugins, pluginsUsedBy } from "../../lib/methods/index.ts";
import { registrationOrigin, registrationsOf } from "../../lib/registry.ts";

const tmp = mkdtempSync(join(tmpdir(), "merit-plugin-first-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("a plugin imported by its own study first", () => {
  it("keeps its registrations: the kit's import of it attributes them, and a run of its method records it", async () => {
    const lib = (p: string) => JSON.stringify(pathToFileURL(join(process.cwd(), "lib", p)).href);
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    const plugin = join(tmp, "first-plugin.ts");
    writeFileSync(plugin, `import { meritMethod, registerMethod } from ${lib("plugin.ts")};\nexport const NAME = "imported_first_t";\nregisterMethod(meritMethod(NAME, "merit, registered by a plugin its study imports"));\n`);
    const study = join(tmp, "study.ts");
    writeFileSync(study, `import { NAME } from "./first-plugin.ts";\nexport default NAME;\n`);
    await import(pathToFileURL(study).href); // the study file runs the plugin first
    expect(registrationOrigin("method", "imported_first_t")).toBeNull();
    const records = await loadPlugins([plugin]);
    expect(registrationsOf(records[0].path)).toEqual(['method "imported_first_t"']);
    expect(registrationOrigin("method", "imported_first_t")).toBe(records[0].path);
    expect(pluginsUsedBy(records, { method: "imported_first_t", dataset: "spider", executor: "sqlite", engine: null })).toEqual(records);
    // the kit's own entries stay the kit's
    expect(registrationOrigin("method", "merit")).toBeNull();
  });

  it("a method the study runs that a file outside its plugins registered is refused: its runs could not record that file", async () => {
    const lib = (p: string) => JSON.stringify(pathToFileURL(join(process.cwd(), "lib", p)).href);
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    writeFileSync(join(tmp, "unlisted.ts"), `import { meritMethod, registerMethod } from ${lib("plugin.ts")};\nregisterMethod(meritMethod("unlisted_t", "x"));\n`);
    const study = join(tmp, "unlisted-study.ts");
    writeFileSync(study, `import "./unlisted.ts";\nimport { defineStudy } from ${lib("experiment/study.ts")};\nexport default defineStudy({ name: "unlisted", methods: ["merit", "unlisted_t"], reference: "merit", queries: 2 });\n`);
    await expect(openStudy(study)).rejects.toThrow(/^study unlisted: method "unlisted_t" is registered by .*unlisted\.ts, which the study's plugins do not list, so its runs could not record it; add that file to plugins$/);
  });
});
