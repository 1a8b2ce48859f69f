declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    FUZZ_RUNS?: string;
    FUZZ_SEED?: string;
  }
}

declare module "*?inline" {
  const dataUrl: string;
  export default dataUrl;
}
