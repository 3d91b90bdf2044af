/**
 * Events as CloudEvents 1.0 (structured mode: the whole envelope is the message, JSON), for Kafka
 * destinations and for webhook endpoints that ask for them: `id` is the event's id, so a consumer
 * deduplicates a repeated publication by it.
 */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';
/** The `source` of every event: this service, whatever its address. */
export const CLOUDEVENTS_SOURCE = '/subsvc';

export interface CloudEvent {
  readonly specversion: '1.0';
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly subject?: string;
  readonly time: string;
  readonly datacontenttype: 'application/json';
  readonly data: unknown;
}

/** The fields of an event a CloudEvent needs. */
export interface EventLike {
  readonly id: string;
  readonly type: string;
  readonly createdAt: string;
  readonly data: object;
}

/** The subscription an event is about, or the bulk request's id (bulk_request.completed): its Kafka key and its `subject`. */
export function subjectOf(event: EventLike): string | undefined {
  const data = event.data as { subscription?: { id?: string }; requestId?: string };
  return data.subscription?.id ?? data.requestId;
}

export function toCloudEvent(event: EventLike): CloudEvent {
  const subject = subjectOf(event);
  return {
    specversion: '1.0',
    id: event.id,
    source: CLOUDEVENTS_SOURCE,
    type: event.type,
    ...(subject ? { subject } : {}),
    time: event.createdAt,
    datacontenttype: 'application/json',
    data: event,
  };
}
