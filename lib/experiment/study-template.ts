/**
 * Experiment, a new study from the template (`merit study new NAME`): studies/template copied to
 * DIR/NAME/, its name, its paths and its imports of lib/ rewritten.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { MeritError, UsageError } from "../errors.ts";
import { STUDY_NAME } from "./study.ts";

const TEMPLATE = fileURLToPath(new URL("../../studies/template", import.meta.url));
const LIB = fileURLToPath(new URL("..", import.meta.url));

/** What `newStudy` wrote. */
export interface NewStudy {
  /** The folder written, DIR/NAME. */
  dir: string;
  /** Every file written, with `/`. */
  files: string[];
  /** The study file, DIR/NAME/study.ts. */
  studyFile: string;
}

/** Writes DIR/NAME/ (default studies/NAME/) from studies/template; refuses an existing folder. */
export function newStudy(name: string, options: { dir?: string } = {}): NewStudy {
  if (!STUDY_NAME.test(name)) throw new UsageError(`study name "${name}": use lower-case letters, digits, - and _, starting with a letter or digit (it names studies/NAME, runs/studies/NAME and results/studies/NAME)`);
  const target = join(options.dir ?? "studies", name);
  if (existsSync(target)) throw new MeritError(`${target} already exists; choose another NAME or delete the folder`);
  let lib = relative(resolve(target), LIB).split(sep).join("/");
  if (!lib.startsWith(".")) lib = `./${lib}`;
  mkdirSync(target, { recursive: true });
  const files = readdirSync(TEMPLATE).filter((f) => f.endsWith(".ts")).sort();
  for (const file of files) {
    const text = readFileSync(join(TEMPLATE, file), "utf8")
      .replaceAll(`"../../lib/`, `"${lib}/`)
      .replaceAll("studies/template/", `${target.split(sep).join("/")}/`)
      .replaceAll("results/studies/template", `results/studies/${name}`)
      .replace(`name: "template",`, `name: ${JSON.stringify(name)},`);
    writeFileSync(join(target, file), text);
  }
  // outside the kit's folder no package.json says "type": "module", and Node would have to guess the files' module format
  const outside = relative(dirname(LIB), resolve(target)).startsWith("..");
  if (outside) writeFileSync(join(target, "package.json"), JSON.stringify({ private: true, type: "module" }, null, 2) + "\n");
  return { dir: target, files: [...files, ...(outside ? ["package.json"] : [])].map((f) => join(target, f).split(sep).join("/")), studyFile: join(target, "study.ts").split(sep).join("/") };
}
