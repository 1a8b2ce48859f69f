import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SECRETS } from "../../src/lib/secrets";

const root = path.resolve(import.meta.dirname, "../..");
const toml = readFileSync(path.join(root, "wrangler.toml"), "utf8");
const deploy = readFileSync(path.join(root, "docs/deploy.md"), "utf8");
const configuration = readFileSync(path.join(root, "docs/configuration.md"), "utf8");

/** Every value of `name = "…"` in the file (queues, buckets, databases). */
const valuesOf = (name: string) => [...toml.matchAll(new RegExp(`^${name} = "([^"]+)"`, "gm"))].map((m) => m[1]);

describe("the Worker's zod, less its locales (scripts/zod-without-locales.mjs)", () => {
  it("exports everything zod and zod/v4/core export but the locales", async () => {
    const zod = await import("zod");
    const trimmed = await import("../../scripts/zod-without-locales.mjs");
    expect(Object.keys(trimmed).sort()).toEqual(
      Object.keys(zod)
        .filter((name) => name !== "locales")
        .sort(),
    );
    const core = await import("zod/v4/core");
    expect(Object.keys(trimmed.core).sort()).toEqual(
      Object.keys(core)
        .filter((name) => name !== "locales")
        .sort(),
    );
    expect(trimmed.z.object({ n: trimmed.z.int() }).safeParse({ n: "1" }).error?.issues[0]?.message).toBe(
      "Invalid input: expected number, received string",
    );
  });
});

describe("docs/deploy.md walks a new account through everything wrangler.toml binds", () => {
  it("creates every queue, dead-letter queue, bucket and database", () => {
    const queues = new Set([...valuesOf("queue"), ...valuesOf("dead_letter_queue")]);
    expect(queues.size).toBeGreaterThanOrEqual(5);
    for (const queue of queues) expect(deploy).toContain(`npx wrangler queues create ${queue}\n`);
    for (const bucket of valuesOf("bucket_name")) expect(deploy).toContain(`npx wrangler r2 bucket create ${bucket}\n`);
    for (const database of valuesOf("database_name")) expect(deploy).toContain(`npx wrangler d1 create ${database}\n`);
  });

  it("puts every secret the Worker requires, says how to rotate each, and PUBLIC_BASE_URL where a redeploy keeps it", () => {
    // The list is the Worker's own (src/config.ts), so a secret added there must be added here too.
    for (const secret of ["ADMIN_TOKEN", ...Object.values(SECRETS)]) {
      expect(deploy).toContain(`wrangler secret put ${secret}`);
    }
    for (const secret of Object.values(SECRETS)) expect(configuration).toContain(`\`${secret}_PREVIOUS\``);
    expect(deploy).toContain("wrangler secret put CURSOR_SECRET_PREVIOUS");
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
      const metafile = path.join(out, "meta.json");
      // The image itself cannot be built here (no Docker daemon); the rollout flag checks the rest.
      const args = [
        "wrangler",
        "deploy",
        "--dry-run",
        "--containers-rollout=none",
        "--outdir",
        out,
        "--metafile",
        metafile,
      ];
      const result = spawnSync("npx", args, {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
      });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain("--dry-run: exiting now.");
      // zod's locales stay out (wrangler.toml's alias): only English, which its schemas register.
      const meta = JSON.parse(readFileSync(metafile, "utf8")) as {
        outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
      };
      const inputs = Object.values(meta.outputs).flatMap((output) => Object.entries(output.inputs));
      const locales = inputs.filter(
        ([file, { bytesInOutput }]) => file.includes("zod/v4/locales/") && bytesInOutput > 0,
      );
      expect(locales.map(([file]) => file)).toEqual(["node_modules/zod/v4/locales/en.js"]);
      expect(inputs.some(([file]) => file === "scripts/zod-without-locales.mjs")).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});
