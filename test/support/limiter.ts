import { env } from "cloudflare:workers";

/** The rate limiter's binding, with `around` wrapped around each call to an object (consume, consumeBeacon, peek, release). */
export function limiterAround(around: <T>(call: () => Promise<T>) => Promise<T>): Env["RATE_LIMITER"] {
  return {
    idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
    get: (id: DurableObjectId) => {
      // RPC stubs are proxies of their own: call them directly, never through Reflect.
      const stub = env.RATE_LIMITER.get(id);
      return {
        consume: (...args: Parameters<typeof stub.consume>) => around(() => stub.consume(...args)),
        consumeInMemory: (...args: Parameters<typeof stub.consumeInMemory>) =>
          around(() => stub.consumeInMemory(...args)),
        consumeBeacon: (...args: Parameters<typeof stub.consumeBeacon>) => around(() => stub.consumeBeacon(...args)),
        peek: (...args: Parameters<typeof stub.peek>) => around(() => stub.peek(...args)),
        release: (...args: Parameters<typeof stub.release>) => around(() => stub.release(...args)),
      };
    },
  } as unknown as Env["RATE_LIMITER"];
}
