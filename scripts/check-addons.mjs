// The native add-ons `npm ci` compiles for one Node ABI (better-sqlite3, hnswlib-node), each loaded
// and used once with the Node running this script: `make install` (scripts/install.sh) ends with it,
// so add-ons built for another Node or against other headers stop the install here, in one line,
// instead of failing later at run time. Resolved from the working directory's node_modules.
// Exit 0 when all load; else one line on stderr naming the add-on, this Node and the fix, exit 1.
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.cwd(), "package.json"));
const ADDONS = {
  "better-sqlite3": (m) => new m(":memory:").prepare("SELECT 1 AS x").get(),
  "hnswlib-node": (m) => new m.HierarchicalNSW("l2", 2).initIndex(1),
};
for (const [name, use] of Object.entries(ADDONS)) {
  try {
    use(require(name));
  } catch (error) {
    // Node's message spans lines ("The module '…'" / "was compiled against … NODE_MODULE_VERSION n"):
    // one line of all of it, less its own advice (npm rebuild would rebuild against the same headers).
    const why = String(error instanceof Error ? error.message : error).split("\n").map((l) => l.trim()).filter((l) => l !== "").join(" ").replace(/\s*Please try re-compiling.*$/, "") || "unknown error";
    const nodedir = process.env.npm_config_nodedir ? `npm_config_nodedir=${process.env.npm_config_nodedir}` : "npm_config_nodedir unset";
    process.stderr.write(
      `make install: ${name} does not load under Node ${process.version} (ABI ${process.versions.modules}, ${process.execPath}; ${nodedir}): ${why}; ` +
        `it must be built against this Node's headers: remove any nodedir from ~/.npmrc (npm config delete nodedir), delete node_modules and run make install again\n`,
    );
    process.exit(1);
  }
}
