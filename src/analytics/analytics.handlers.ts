/** Thin handlers for the analytics figures: JSON, or the pause figures as CSV. */
import { Readable } from 'node:stream';
import { csvField, CSV_TYPE } from '../bulk/bulk.export.js';
import { StreamedBody, type Handlers } from '../request-context/request-context.js';
import type { PauseFigures } from './analytics.rules.js';
import type { AnalyticsService } from './analytics.service.js';

const COLUMNS = [
  'key',
  'pausesStarted',
  'resumed',
  'resumedBy.merchant',
  'resumedBy.schedule',
  'resumedBy.hold',
  'resumedBy.customer',
  'resumedBy.billing',
  'cancelledWhilePaused',
  'stillPaused',
  'resumeRate',
  'medianPauseDays',
  'p90PauseDays',
] as const;

/** The figures as CSV (RFC 4180), a column per field, `resumedBy` flattened; null is empty. */
export function pauseFiguresCsv(rows: readonly PauseFigures[]): string {
  const line = (row: PauseFigures) =>
    COLUMNS.map((column) => {
      const value = column.startsWith('resumedBy.')
        ? row.resumedBy[column.slice('resumedBy.'.length) as keyof PauseFigures['resumedBy']]
        : row[column as Exclude<(typeof COLUMNS)[number], `resumedBy.${string}`>];
      return csvField(value === null ? null : String(value));
    }).join(',');
  return [COLUMNS.join(','), ...rows.map(line)].map((l) => `${l}\r\n`).join('');
}

export function analyticsHandlers(analytics: AnalyticsService): Pick<Handlers, 'getPauseAnalytics' | 'getResumeForecast'> {
  return {
    getPauseAnalytics: async ({ merchant, query, accepts }) => {
      const figures = await analytics.pauses(merchant.id, {
        from: query.from,
        to: query.to,
        groupBy: query.groupBy,
      });
      if (accepts('application/json', 'text/csv') === 'text/csv') {
        const headers = { 'Content-Disposition': `attachment; filename="pauses-${figures.from}-${figures.to}-by-${figures.groupBy}.csv"` };
        return { status: 200, body: new StreamedBody(CSV_TYPE, Readable.from([pauseFiguresCsv(figures.data)])), headers };
      }
      return { status: 200, body: figures };
    },
    getResumeForecast: async ({ merchant, query }) => ({
      status: 200,
      body: await analytics.resumes(merchant.id, {
        days: query.days === undefined ? undefined : Number(query.days),
        groupBy: query.groupBy,
      }),
    }),
  };
}
