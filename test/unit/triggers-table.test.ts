/**
 * Triggers cover every event type (docs/partners.md, "Triggers"): a type added to the spec's
 * EventType enum without a line in the triggers table fails here, not in a partner's test run.
 */
import { describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/lib/spec.js';
import { TRIGGERS } from '../../src/test-mode/triggers.js';

const spec = loadSpec() as unknown as {
  components: { schemas: { EventType: { enum: string[] }; TestTriggerRequest: { properties: { type: { $ref: string } } } } };
};

describe('the triggers table', () => {
  it('has a trigger for every event type of the spec, and for nothing else', () => {
    expect(Object.keys(TRIGGERS).sort()).toEqual([...spec.components.schemas.EventType.enum].sort());
  });

  it("takes its type from the spec's EventType, so an unknown type is refused at the edge (400 0040)", () => {
    expect(spec.components.schemas.TestTriggerRequest.properties.type.$ref).toBe('#/components/schemas/EventType');
  });
});
