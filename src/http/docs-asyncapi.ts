/**
 * The events for event tooling: an AsyncAPI 3.0 document built from the OpenAPI spec's `webhooks`.
 * `npm run generate` writes it to generated/asyncapi.yaml (drift-checked; `npm run check` validates
 * it with the AsyncAPI parser, scripts/check-asyncapi.ts), and the docs routes serve the same text
 * at /docs/asyncapi.yaml, built from the spec at start, so the image needs no generated/ folder. One message per event type, with its payload
 * schema and the Standard Webhooks headers; the schemas are the spec's own, copied with everything
 * they reference, so the two documents cannot disagree. Beside them, the Kafka event destinations:
 * a server for the merchant's brokers and a topic channel with its bindings, each event type as a
 * CloudEvent keyed by its subscription's id (docs/event-destinations.md).
 */
import { stringify } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface OpenApiParameter {
  readonly name: string;
  readonly in: string;
  readonly description?: string;
  readonly schema: JsonObject;
}

export interface OpenApiSpec {
  readonly info: { readonly title: string; readonly version: string };
  readonly webhooks: Record<string, { readonly post: WebhookOperation }>;
  readonly components: { readonly schemas: Record<string, JsonObject>; readonly parameters: Record<string, OpenApiParameter> };
}

interface WebhookOperation {
  readonly summary: string;
  readonly description?: string;
  readonly parameters: readonly { readonly $ref: string }[];
  readonly requestBody: { readonly content: { readonly 'application/json': { readonly schema: { readonly $ref: string } } } };
}

const SCHEMA_REF = '#/components/schemas/';

/** `subscription.pause_scheduled` → `SubscriptionPauseScheduled`: a name fit for a component key and an operation id. */
function pascal(eventType: string): string {
  return eventType
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

function refName(ref: string, prefix: string): string {
  if (!ref.startsWith(prefix)) throw new Error(`expected a reference under ${prefix}, got ${ref}`);
  return ref.slice(prefix.length);
}

/** The names of every schema `schema` references, directly or through another. */
function referencedSchemas(spec: OpenApiSpec, roots: readonly string[]): string[] {
  const found = new Set<string>();
  const visit = (value: Json): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') add(refName(child, SCHEMA_REF));
      else visit(child);
    }
  };
  const add = (name: string): void => {
    if (found.has(name)) return;
    const schema = spec.components.schemas[name];
    if (!schema) throw new Error(`the spec has no schema ${name}`);
    found.add(name);
    visit(schema);
  };
  roots.forEach(add);
  return [...found].sort();
}

/** The Standard Webhooks headers every delivery carries, as one schema with the spec's descriptions. */
function headersSchema(spec: OpenApiSpec, operation: WebhookOperation): JsonObject {
  const parameters = operation.parameters.map(({ $ref }) => {
    const parameter = spec.components.parameters[refName($ref, '#/components/parameters/')];
    if (!parameter || parameter.in !== 'header') throw new Error(`webhook parameter ${$ref} is not a header`);
    return parameter;
  });
  return {
    type: 'object',
    required: parameters.map((p) => p.name),
    properties: Object.fromEntries(
      parameters.map((p) => [p.name, { ...p.schema, ...(p.description ? { description: p.description } : {}) }]),
    ),
  };
}

/** A Kafka destination's message: a CloudEvents 1.0 envelope (structured mode) around the event as `GET /v2/events/{id}` shows it. */
function cloudEventSchema(type: string): JsonObject {
  return {
    type: 'object',
    required: ['specversion', 'id', 'source', 'type', 'time', 'datacontenttype', 'data'],
    properties: {
      specversion: { const: '1.0' },
      id: { type: 'string', description: "The event's id: a message published twice has the same one." },
      source: { const: '/subsvc' },
      type: { const: type },
      subject: { type: 'string', description: "The subscription's id (a bulk request's for bulk_request.completed)." },
      time: { type: 'string', format: 'date-time' },
      datacontenttype: { const: 'application/json' },
      data: { $ref: `${SCHEMA_REF}Event` },
    },
  };
}

/** The AsyncAPI 3.0 document for the spec's webhooks, as YAML. */
export function asyncapiDocument(spec: OpenApiSpec): string {
  const events = Object.entries(spec.webhooks);
  const payloads = events.map(([, { post }]) => refName(post.requestBody.content['application/json'].schema.$ref, SCHEMA_REF));
  const messages: Record<string, JsonObject> = {};
  const operations: Record<string, JsonObject> = {};
  const kafkaMessages: Record<string, JsonObject> = {};
  for (const [type, { post }] of events) {
    const name = pascal(type);
    kafkaMessages[`${name}CloudEvent`] = {
      name: type,
      title: `${post.summary} (Kafka)`,
      summary: post.summary,
      contentType: 'application/cloudevents+json',
      bindings: { kafka: { key: { type: 'string', description: "The subscription's id (a bulk request's for bulk_request.completed)." } } },
      payload: cloudEventSchema(type),
    };
    operations[`publish${name}`] = {
      action: 'send',
      summary: `Publish a ${type} event to a Kafka destination`,
      channel: { $ref: '#/channels/kafkaTopic' },
      messages: [{ $ref: `#/channels/kafkaTopic/messages/${name}CloudEvent` }],
    };
    messages[name] = {
      name: type,
      title: post.summary,
      summary: post.summary,
      ...(post.description ? { description: post.description.trim() } : {}),
      contentType: 'application/json',
      headers: headersSchema(spec, post),
      payload: { $ref: post.requestBody.content['application/json'].schema.$ref },
    };
    operations[`send${name}`] = {
      action: 'send',
      summary: `Deliver a ${type} event`,
      channel: { $ref: '#/channels/webhookEndpoint' },
      messages: [{ $ref: `#/channels/webhookEndpoint/messages/${name}` }],
    };
  }
  const document = {
    asyncapi: '3.0.0',
    info: {
      title: `${spec.info.title}: webhooks`,
      version: spec.info.version,
      description: [
        "The events the service delivers to a merchant's webhook endpoints, generated from the OpenAPI",
        "spec's `webhooks` (openapi/openapi.yaml): each is an HTTP POST of a JSON body, signed by the",
        'Standard Webhooks specification (https://www.standardwebhooks.com).',
      ].join('\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      merchantKafka: {
        host: '{bootstrapServer}',
        protocol: 'kafka-secure',
        description:
          "A merchant's Kafka brokers, as an event destination names them (POST /v2/event-destinations); TLS unless `tls: false`.",
        variables: { bootstrapServer: { description: "One of the destination's `bootstrapServers` (host:port)." } },
      },
    },
    channels: {
      kafkaTopic: {
        address: '{topic}',
        title: "A merchant's Kafka topic",
        description: 'The `topic` of an event destination; every event type it takes is published to it, in order per subscription.',
        servers: [{ $ref: '#/servers/merchantKafka' }],
        parameters: { topic: { description: "The destination's `topic`." } },
        bindings: { kafka: { topic: '{topic}' } },
        messages: Object.fromEntries(Object.keys(kafkaMessages).map((name) => [name, { $ref: `#/components/messages/${name}` }])),
      },
      webhookEndpoint: {
        // The address is each endpoint's own URL, registered with POST /v2/webhook-endpoints.
        address: null,
        title: "A merchant's webhook endpoint",
        description: 'The URL registered with `POST /v2/webhook-endpoints`; every event type it subscribes to is POSTed to it.',
        messages: Object.fromEntries(Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }])),
      },
    },
    operations,
    components: {
      messages: { ...messages, ...kafkaMessages },
      schemas: Object.fromEntries(referencedSchemas(spec, [...payloads, 'Event']).map((name) => [name, spec.components.schemas[name]!])),
    },
  };
  return `# Generated from openapi/openapi.yaml by npm run generate (src/http/docs-asyncapi.ts): do not edit.\n${stringify(document, { lineWidth: 0 })}`;
}
