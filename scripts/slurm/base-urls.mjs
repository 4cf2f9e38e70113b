#!/usr/bin/env node
// The grid's config with the servers of a Slurm allocation (scripts/slurm/servers.sbatch):
//   node scripts/slurm/base-urls.mjs CONFIG SERVERS_DIR OUT
// waits until MERIT_SERVER_COUNT (default 1) files SERVERS_DIR/server-<i>.url exist (at most
// MERIT_SERVER_WAIT seconds, default 1800), then writes CONFIG with model.base_urls = their URLs in
// task order to OUT (atomically). Problems: one line naming the file and the fix, exit 2.
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const [configPath, dir, out] = process.argv.slice(2);
const fail = (line) => {
  process.stderr.write(`base-urls: ${line}\n`);
  process.exit(2);
};
if (!configPath || !dir || !out) fail("usage: node scripts/slurm/base-urls.mjs CONFIG SERVERS_DIR OUT");
const count = Number(process.env.MERIT_SERVER_COUNT ?? "1");
if (!Number.isInteger(count) || count < 1) fail(`MERIT_SERVER_COUNT is ${process.env.MERIT_SERVER_COUNT}; set it to the servers job's task count`);
const waitS = Number(process.env.MERIT_SERVER_WAIT ?? "1800");
let config;
try {
  config = JSON.parse(readFileSync(configPath, "utf8"));
} catch (error) {
  fail(`${configPath}: not a readable JSON config (${error.message}); pass the grid's config file`);
}
if (config?.model?.backend !== "openai") fail(`${configPath}: model.backend is ${JSON.stringify(config?.model?.backend)}; servers need "backend": "openai"`);

const urlFiles = () => (existsSync(dir) ? readdirSync(dir) : []).map((name) => /^server-(\d+)\.url$/.exec(name)).filter((m) => m !== null).sort((a, b) => Number(a[1]) - Number(b[1])).map((m) => `${dir}/${m[0]}`);
const deadline = Date.now() + waitS * 1000;
while (urlFiles().length < count) {
  if (Date.now() > deadline) fail(`${dir}: ${urlFiles().length} of ${count} server URL file(s) after ${waitS} s; check the servers job's log (scripts/slurm/servers.sbatch)`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
const urls = urlFiles().map((file) => {
  const url = readFileSync(file, "utf8").trim();
  if (!/^https?:\/\/\S+$/.test(url)) fail(`${file}: ${JSON.stringify(url.slice(0, 80))} is not a server URL; delete it and restart the servers job`);
  return url;
});
config.model.base_urls = urls;
const tmp = `${out}.tmp-${process.pid}`;
writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`);
renameSync(tmp, out);
process.stderr.write(`base-urls: ${out} calls ${urls.join(", ")}\n`);
