/**
 * Imported first by the CLI (src/cli.ts), before anything loads the MongoDB driver: starts
 * OpenTelemetry tracing when the OTEL_* variables ask for it, so that the driver's
 * instrumentation is in place when the driver loads (src/observability/tracing.ts).
 */
import { serviceVersion } from '../lib/project-root.js';
import { startTracing, tracesRequested } from './tracing.js';

if (tracesRequested()) startTracing({ serviceVersion: serviceVersion() });
