import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../helpers";

const BROKEN = [
  "lone \ud800 high",
  "lone \udc00 low",
  "swapped \udc00\ud800",
  "nul \u0000",
  "tab\tinside",
  "c1 \u0085",
  "del \u007f",
];

describe("text fields are well-formed Unicode without control characters", () => {
  it.each(BROKEN)("refuses %j with each endpoint's own code, storing nothing", async (text) => {
    const { session, key, project } = await newWorkspace();
    const cases: [string, RequestInit, string][] = [
      ["/v1/projects", withCookie(session, json("POST", { name: text })), "invalid_name"],
      ["/v1/videos", bearer(key, json("POST", { title: text })), "invalid_body"],
      [
        `/v1/projects/${project.id}/api-keys`,
        withCookie(session, json("POST", { name: text, scopes: ["read"], mode: "test" })),
        "invalid_body",
      ],
      [
        `/v1/projects/${project.id}/webhook-endpoints`,
        bearer(key, json("POST", { url: "https://hooks.example.com/in", description: text })),
        "invalid_body",
      ],
      [
        `/v1/projects/${project.id}/webhook-endpoints`,
        bearer(key, json("POST", { url: `https://hooks.example.com/${text}` })),
        "invalid_body",
      ],
      [
        `/v1/projects/${project.id}/encoding-settings`,
        withCookie(session, json("PATCH", { watermark: { position: `top-right${text}` } })),
        "invalid_encoding_settings",
      ],
      [
        "/v1/auth/signup",
        json(
          "POST",
          { email: "new@example.com", password: `long enough ${text}` },
          { "cf-connecting-ip": "192.0.2.77" },
        ),
        "invalid_body",
      ],
    ];
    for (const [path, init, code] of cases) {
      const response = await api(path, init);
      expect([path, response.status, await errorCode(response)]).toEqual([path, 400, code]);
    }
    const stored = await env.DB.batch([
      env.DB.prepare("SELECT count(*) AS n FROM projects WHERE account_id = ?").bind(session.accountId),
      env.DB.prepare("SELECT count(*) AS n FROM videos WHERE project_id = ?").bind(project.id),
      env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoints WHERE project_id = ?").bind(project.id),
      env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE email = 'new@example.com'"),
    ]);
    expect(stored.map((r) => (r.results[0] as { n: number }).n)).toEqual([1, 0, 0, 0]);
  });

  it("stores well-formed text as sent, astral characters and combining marks included", async () => {
    const { key } = await newWorkspace();
    const title = "🎬 café\u0301 — 日本語";
    const created = await api("/v1/videos", bearer(key, json("POST", { title })));
    expect(created.status).toBe(201);
    expect(((await created.json()) as { video: { title: string } }).video.title).toBe(title);
  });
});
