import {
  AggregationTemporality,
  type MetricData,
  MetricReader,
  type MetricReaderOptions,
} from '@opentelemetry/sdk-metrics';

/** An OpenTelemetry SDK reader the tests collect from on demand, cumulative unless told otherwise. */
export class CollectingReader extends MetricReader {
  constructor(options: MetricReaderOptions = {}) {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE, ...options });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
  /** Collects now and returns every metric of every scope. */
  async metrics(): Promise<MetricData[]> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  }
}
