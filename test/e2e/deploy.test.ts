import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const toml = readFileSync(path.join(root, "wrangler.toml"), "utf8");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const deploy = readme.slice(readme.indexOf("## Deploy to Cloudflare"), readme.indexOf("## Architecture"));

/** Every value of `name = "…"` in the file (queues, buckets, databases). */
const valuesOf = (name: string) => [...toml.matchAll(new RegExp(`^${name} = "([^"]+)"`, "gm"))].map((m) => m[1]);

describe("the README's deploy walks a new account through everything wrangler.toml binds", () => {
  it("creates every queue, dead-letter queue, bucket and database", () => {
    const queues = new Set([...valuesOf("queue"), ...valuesOf("dead_letter_queue")]);
    expect(queues.size).toBeGreaterThanOrEqual(5);
    for (const queue of queues) expect(deploy).toContain(`npx wrangler queues create ${queue}\n`);
    for (const bucket of valuesOf("bucket_name")) expect(deploy).toContain(`npx wrangler r2 bucket create ${bucket}\n`);
    for (const database of valuesOf("database_name")) expect(deploy).toContain(`npx wrangler d1 create ${database}\n`);
  });

  it("puts every secret the Worker requires, and PUBLIC_BASE_URL where a redeploy keeps it", () => {
    for (const secret of ["ADMIN_TOKEN", "CURSOR_SECRET", "PLAYBACK_SECRET"]) {
      expect(deploy).toContain(`wrangler secret put ${secret}`);
    }
    expect(toml).toMatch(/^PUBLIC_BASE_URL = /m);
    expect(deploy).toContain("PUBLIC_BASE_URL` belongs in `wrangler.toml`");
  });

  it("says how the encoder's container image is built and deployed", () => {
    expect(toml).toMatch(/^image = "\.\/encoder\/Dockerfile"$/m);
    const instance = /^instance_type = "([^"]+)"$/m.exec(toml)?.[1] ?? "";
    expect(deploy).toContain(instance);
    expect(deploy).toMatch(/docker/i);
  });

  it("builds, the encoder's container included: wrangler deploy --dry-run --containers-rollout=none passes", () => {
    const out = mkdtempSync(path.join(tmpdir(), "dry-run-"));
    try {
      // The image itself cannot be built here (no Docker daemon); the rollout flag checks the rest.
      const result = spawnSync(
        "npx",
        ["wrangler", "deploy", "--dry-run", "--containers-rollout=none", "--outdir", out],
        {
          cwd: root,
          encoding: "utf8",
          env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
        },
      );
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain("--dry-run: exiting now.");
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});
