import { Counter, type Metric, type Registry } from 'prom-client';

/*
 * Series counted on every request. prom-client hashes a child's labels again on each inc() and
 * observe() (about a microsecond each, a few for a histogram): on `GET /api/me` that would be a
 * visible share of the request. These keep plain numbers per pre-resolved child instead and hand
 * them to the registry when it is scraped, which costs once per series, not once per request.
 */

/** One labelled series of a {@link HotCounter}: `inc()` adds to a number. */
export interface HotCount {
  inc(): void;
}

/** A counter whose children are plain numbers until a scrape adds them to the prom-client counter. */
export class HotCounter {
  private readonly children: Array<{ readonly labels: Readonly<Record<string, string>>; pending: number }> = [];

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    const children = this.children;
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const child of children) {
          if (child.pending === 0) continue;
          this.inc(child.labels, child.pending);
          child.pending = 0;
        }
      },
    });
  }

  /** The series of these label values; callers keep it, so a request does no lookup. */
  child(labels: Readonly<Record<string, string>>): HotCount {
    const child = { labels, pending: 0 };
    this.children.push(child);
    return { inc: () => void child.pending++ };
  }
}

/** One labelled series of a {@link HotHistogram}. */
export interface HotObserve {
  observe(value: number): void;
}

interface HistogramChild {
  readonly labels: Readonly<Record<string, string>>;
  /** Per bucket (the last is +Inf), not cumulative. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram read by the registry through `get()`, the shape every prom-client metric returns
 * (`_bucket` with `le`, `_sum`, `_count`), its buckets kept as plain numbers.
 */
export class HotHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly children: HistogramChild[] = [];

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {
    // Registered as any metric is: the registry only reads name, help, type, get() and reset().
    registry.registerMetric(this as unknown as Metric);
  }

  child(labels: Readonly<Record<string, string>>): HotObserve {
    const child: HistogramChild = { labels, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
    this.children.push(child);
    const { buckets } = this;
    return {
      observe(value) {
        let i = 0;
        while (i < buckets.length && value > (buckets[i] as number)) i++;
        child.counts[i] = (child.counts[i] as number) + 1;
        child.sum += value;
        child.count++;
      },
    };
  }

  async get() {
    const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
    for (const { labels, counts, sum, count } of this.children) {
      if (count === 0) continue;
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += counts[i] as number;
        values.push({ value: cumulative, labels: { ...labels, le }, metricName: `${this.name}_bucket` });
      });
      values.push({ value: count, labels: { ...labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: sum, labels: { ...labels }, metricName: `${this.name}_sum` });
      values.push({ value: count, labels: { ...labels }, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const child of this.children) {
      child.counts.fill(0);
      child.sum = 0;
      child.count = 0;
    }
  }
}
