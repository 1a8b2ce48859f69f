// A program written against the generated client, as a customer would write it: openapi-fetch
// over the types `npm run openapi` generates (api-client/api.d.ts). test/e2e/client-typescript.test.ts
// compiles it with the oldest TypeScript the README names, and the `@ts-expect-error` lines prove
// the types bite: each fails to compile if the types stop catching its mistake.
import createClient from "openapi-fetch";
import type { components, paths } from "../../api-client/api";

type Video = components["schemas"]["Video"];

export async function publish(baseUrl: string, apiKey: string): Promise<Video | undefined> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });
  const created = await client.POST("/v1/videos", {
    body: { title: "Launch", visibility: "unlisted" },
    headers: { "idempotency-key": "launch-1" },
  });
  if (!created.data) return undefined;
  const id: string = created.data.video.id;
  // @ts-expect-error: visibility is a closed set.
  await client.PATCH("/v1/videos/{id}", { params: { path: { id } }, body: { visibility: "secret" } });
  const bulk = await client.POST("/v1/videos/bulk", {
    body: { action: "set_visibility", videoIds: [id], visibility: "private" },
  });
  for (const result of bulk.data?.results ?? []) if (!result.ok) console.log(result.error.code);
  // @ts-expect-error: the path needs its id.
  await client.GET("/v1/videos/{id}", {});
  const listed = await client.GET("/v1/videos", { params: { query: { status: "uploaded", limit: 10 } } });
  const error = listed.error?.error.code;
  return listed.data?.data.find((video) => video.id === id && error === undefined);
}
