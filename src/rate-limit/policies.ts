/**
 * Every rate limit of the API, as data. `per: "caller"` counts per API key or session,
 * `per: "ip"` per client address (for the unauthenticated auth endpoints).
 */
export const POLICIES = {
  signup: { limit: 10, windowSeconds: 60, per: "ip" },
  login: { limit: 10, windowSeconds: 60, per: "ip" },
  bulk: { limit: 30, windowSeconds: 60, per: "caller" },
  thumbnail: { limit: 30, windowSeconds: 60, per: "caller" },
  deliveries: { limit: 60, windowSeconds: 60, per: "caller" },
  encoding_settings: { limit: 60, windowSeconds: 60, per: "caller" },
  project_create: { limit: 60, windowSeconds: 60, per: "caller" },
} as const satisfies Record<string, { limit: number; windowSeconds: number; per: "caller" | "ip" }>;

export type PolicyName = keyof typeof POLICIES;
