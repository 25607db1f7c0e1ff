// node-redlock peer of rlock's benchmark: redlock-run.cjs NAME -- CMD [ARGS...]
// Redlock#using() with one ioredis client: 30 s lease, automatic extension, default
// retryDelay (200 ms) and retryJitter (100 ms) but retryCount -1 (no limit), so it
// waits like the other peers. Runs CMD, releases, exits with CMD's status.
// Redis: REDIS_URL (set by bench/run).
"use strict";
const { spawn } = require("child_process");
const os = require("os");
const Redis = require("ioredis");
const Redlock = require("redlock").default;

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length < 3 || argv[1] !== "--") {
    process.stderr.write("usage: node-redlock NAME -- CMD [ARGS...]\n");
    return 64;
  }
  const name = argv[0];
  const cmd = argv.slice(2);
  const client = new Redis(process.env.REDIS_URL || "redis://127.0.0.1:6379");
  const redlock = new Redlock([client], { retryCount: -1 });
  let rc = 70;
  try {
    await redlock.using([name], 30000, async () => {
      rc = await new Promise((resolve) => {
        const child = spawn(cmd[0], cmd.slice(1), { stdio: "inherit" });
        child.on("error", (e) => {
          process.stderr.write(`node-redlock: ${cmd[0]}: ${e.message}\n`);
          resolve(e.code === "ENOENT" ? 127 : 126);
        });
        child.on("exit", (code, signal) =>
          resolve(code !== null ? code : 128 + (os.constants.signals[signal] || 0)));
      });
    });
  } finally {
    client.disconnect();
  }
  return rc;
}

main().then(
  (rc) => process.exit(rc),
  (e) => {
    process.stderr.write(`node-redlock: ${e && e.message ? e.message : e}\n`);
    process.exit(70);
  },
);
