import { Module } from '@nestjs/common';
import { MetricQueries } from './application/metric-queries';

/** The CustomerMetrics read side; the `metrics` projection (projections/metrics) writes what it reads. */
@Module({ providers: [MetricQueries], exports: [MetricQueries] })
export class MetricsModule {}
