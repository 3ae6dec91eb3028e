/** The part of autocannon 9's programmatic API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      pipelining?: number;
      method?: 'GET' | 'POST';
      headers?: Record<string, string>;
      body?: string;
      /** Each request made through `setupRequest`, which may change it (here: its body). */
      requests?: { setupRequest: (request: { body?: string }) => { body?: string } }[];
      /** Seconds before a request counts as a timeout. */
      timeout?: number;
    }

    interface Stats {
      average: number;
      p50: number;
      p99: number;
      max: number;
      total: number;
    }

    interface Result {
      requests: Stats;
      latency: Stats;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      /** Seconds, as measured by autocannon. */
      duration: number;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
      on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
