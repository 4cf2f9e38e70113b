// The study's test (run by `make test`, which finds studies/**/*.test.ts): whatever the study file
// lists, its plugin files load and each registers something, every method and dataset it names
// exists, each method of its own (registered by its plugins) that it runs is compared and differs from
// every method it is compared with (in its hooks and their args or, for an arm, its conditions), and
// each ranker its plugins register builds from its defaults.
// It reads the study file, so it stays true when you change the methods or the plugins; add tests of
// your plugin's own behaviour below.
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { armConditions, checkStudyNames, registerStudyArms, studyPluginFiles } from "../../lib/experiment/study.ts";
import { getMethod, loadPlugins, RANKERS, type PluginRecord } from "../../lib/methods/index.ts";
import { registrationOrigin, registrationsOf } from "../../lib/registry.ts";
import study from "./study.ts";

let plugins: PluginRecord[] = [];
beforeAll(async () => {
  plugins = await loadPlugins(studyPluginFiles(study, fileURLToPath(new URL("./study.ts", import.meta.url))));
  registerStudyArms(study); // the study's arms are methods of their own names, as `merit study run` registers them
});
/** Whether one of the study's plugin files registered `name` in the registry of `kind`. */
const ours = (kind: string, name: string) => plugins.some((p) => registrationOrigin(kind, name) === p.path);

describe(`study ${study.name} and its plugins`, () => {
  it("loads each plugin file, which registers something, and knows every method and dataset the study names", () => {
    expect(plugins).toHaveLength(study.plugins.length);
    for (const p of plugins) expect(registrationsOf(p.path), `${p.path} registers nothing`).not.toEqual([]);
    expect(() => checkStudyNames(study)).not.toThrow();
  });

  it("compares each method of its own that it runs, with methods that differ from it", () => {
    const own = study.methods.filter((m) => ours("method", m));
    for (const m of own) {
      const others = study.comparisons.filter((pair) => pair.includes(m)).map(([a, b]) => (a === m ? b : a));
      expect(others, `${m} is in no comparison`).not.toEqual([]);
      // What a run of a method is: its hooks with their args and, for an arm, the conditions it runs under.
      const identity = (name: string) => ({ method: getMethod(name).record, conditions: armConditions(study, name) });
      for (const other of others) expect(identity(m), `${m} is ${other} under another name: their Δ is 0 by construction`).not.toEqual(identity(other));
    }
  });

  it("builds each ranker its plugins register from the ranker's defaults", () => {
    for (const name of RANKERS.names().filter((n) => ours(RANKERS.kind, n))) {
      const factory = RANKERS.get(name);
      expect(() => factory.build({ ...factory.defaults }), `ranker "${name}"`).not.toThrow();
    }
  });
});
